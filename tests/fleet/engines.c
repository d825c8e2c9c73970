/*
 * fastclock fleet tests — see engines.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engines.h"

/* The NTP SHM refclock segment (ntpd's refclock_shm.c layout, which chronyd's refclock_shm.c reads). */
struct shm_time {
	int mode; /* 1: the count protocol */
	volatile int count;
	time_t clock_sec;
	int clock_usec;
	time_t receive_sec;
	int receive_usec;
	int leap;
	int precision;
	int nsamples;
	volatile int valid;
	unsigned clock_nsec;
	unsigned receive_nsec;
	int dummy[8];
};
#define SHM_KEY 0x4e545030 /* "NTP0": unit 0; unit u is SHM_KEY + u */
/* chronyd's refclock polls the segment every 2^dpoll s; feeding at 4 Hz matches dpoll -2 */
#define FEED_EVERY_NS 250000000LL

int64_t now_ns(int clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int chronyd_cmdport;

int engines_unshare_net(void)
{
	struct ifreq r;
	int s, rc;
	if (unshare(CLONE_NEWNET) != 0) {
		fprintf(stderr, "unshare(net): %s\n", strerror(errno));
		return -1;
	}
	memset(&r, 0, sizeof(r));
	strcpy(r.ifr_name, "lo");
	s = socket(AF_INET, SOCK_DGRAM, 0);
	rc = s < 0 || ioctl(s, SIOCGIFFLAGS, &r) != 0 || (r.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &r)) != 0;
	if (s >= 0)
		close(s);
	if (rc)
		fprintf(stderr, "lo up: %s\n", strerror(errno));
	return rc ? -1 : 0;
}

int engines_unshare(const char *tmp)
{
	char run[512];
	if (unshare(CLONE_NEWIPC | CLONE_NEWNS) != 0) {
		fprintf(stderr, "unshare(IPC, mount): %s\n", strerror(errno));
		return -1;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		fprintf(stderr, "mount --make-rprivate /: %s\n", strerror(errno));
		return -1;
	}
	snprintf(run, sizeof(run), "%s/run", tmp);
	mkdir(run, 0755);
	if (mount(run, "/run", NULL, MS_BIND, NULL) != 0) {
		fprintf(stderr, "mount --bind %s /run: %s\n", run, strerror(errno));
		return -1;
	}
	mkdir("/run/chrony", 0750); /* chronyd refuses a command socket in a directory others can open */
	mkdir("/run/clockbound", 0755);
	return 0;
}

static uint64_t rng = 88172645463325252ull;
static int64_t noise(int64_t amp)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return amp ? (int64_t)(rng % (uint64_t)(2 * amp + 1)) - amp : 0;
}

static void *feed(void *arg)
{
	struct feeder *f = arg;
	struct shm_time *s = f->shm;
	while (!f->stop) {
		if (!f->paused) {
			int64_t r = now_ns(CLOCK_REALTIME), c = r + f->offset_ns + noise(f->noise_ns);
			s->mode = 1;
			__atomic_add_fetch(&s->count, 1, __ATOMIC_SEQ_CST);
			s->clock_sec = c / 1000000000LL;
			s->clock_nsec = (unsigned)(c % 1000000000LL);
			s->clock_usec = (int)(s->clock_nsec / 1000);
			s->receive_sec = r / 1000000000LL;
			s->receive_nsec = (unsigned)(r % 1000000000LL);
			s->receive_usec = (int)(s->receive_nsec / 1000);
			s->leap = 0;
			s->precision = -20;
			s->nsamples = 1;
			__atomic_add_fetch(&s->count, 1, __ATOMIC_SEQ_CST);
			s->valid = 1;
			f->samples++;
		}
		struct timespec d = {0, FEED_EVERY_NS};
		nanosleep(&d, NULL);
	}
	return NULL;
}

int feeder_start(struct feeder *f)
{
	pthread_t t;
	int id = shmget(SHM_KEY + f->unit, sizeof(struct shm_time), IPC_CREAT | 0600);
	if (id < 0 || (f->shm = shmat(id, NULL, 0)) == (void *)-1) {
		fprintf(stderr, "shm 0x%x: %s\n", SHM_KEY + f->unit, strerror(errno));
		return -1;
	}
	memset(f->shm, 0, sizeof(struct shm_time));
	if (pthread_create(&t, NULL, feed, f) != 0)
		return -1;
	f->thread = (unsigned long)t;
	return 0;
}

void feeder_stop(struct feeder *f)
{
	if (!f->shm)
		return;
	f->stop = 1;
	pthread_join((pthread_t)f->thread, NULL);
	shmdt(f->shm);
	f->shm = NULL;
}

static pid_t spawn(char *const argv[])
{
	pid_t p = fork();
	if (p == 0) {
		int fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		if (!getenv("FLEET_VERBOSE"))
			dup2(fd, 1), dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return p;
}

/* $FLEET_CHRONYD when it names an executable (tests/fleet/CMakeLists.txt sets it to the chronyd that
 * scripts/setup.sh unpacks into .engines/chrony), else Debian's installed /usr/sbin/chronyd. */
const char *chronyd_path(void)
{
	const char *e = getenv("FLEET_CHRONYD");
	if (e && *e && access(e, X_OK) == 0)
		return e;
	return "/usr/sbin/chronyd";
}

pid_t chronyd_start(const char *dir, const char *sock, const char *refclocks)
{
	char conf[600], body[2048];
	FILE *fp;
	snprintf(conf, sizeof(conf), "%s/chrony.conf", dir);
	/* Refclocks with known offsets; no NTP port (port 0), the command port only where a scenario asks
	 * (chronyd_cmdport, on the loopback of its own network namespace); maxclockerror 1 ppm (the drift
	 * ClockBound's -m 1 assumes); private files. */
	snprintf(body, sizeof(body),
		 "%s"
		 "port 0\ncmdport %d\nbindcmdaddress %s\nmaxclockerror 1\n"
		 "driftfile %s/drift\npidfile %s/chronyd.pid\nlogdir %s\n",
		 refclocks, chronyd_cmdport, sock, dir, dir, dir);
	fp = fopen(conf, "w");
	if (!fp)
		return -1;
	fputs(body, fp);
	fclose(fp);
	char *argv[] = {(char *)chronyd_path(), "-x", "-n", "-u", "root", "-f", conf, "-L", "0", NULL};
	return spawn(argv);
}

pid_t clockbound_start(const char *bin)
{
	char *argv[] = {(char *)bin, "-d", "-m", "1", NULL};
	return spawn(argv);
}

void engine_stop(pid_t pid)
{
	int st;
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	for (int i = 0; i < 300; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}
