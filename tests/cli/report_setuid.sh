#!/bin/sh
# report_setuid.sh FASTCLOCK — `fastclock report` installed set-user-ID root and run by nobody never runs the
# caller's program: it used to find Python with execvp("python3") on the caller's PATH, so nobody's ./python3
# ran with root's effective uid (docs/THREATS.md, "The environment"). A control run of the same copy without the
# set-user-ID bit shows that the caller's python3 is what it finds otherwise. Needs root and setpriv (else 77).
set -u
fc=$1
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null || exit 77
d=$(mktemp -d /tmp/fc_report_suid_XXXXXX) || exit 2
trap 'rm -rf "$d"' EXIT
mkdir "$d/evil" "$d/out" && chmod 755 "$d" "$d/evil" && chmod 777 "$d/out" || exit 2
cp "$fc" "$d/fastclock" && echo '{}' >"$d/in.json" && chmod 644 "$d/in.json" || exit 2
printf '#!/bin/sh\ntouch "%s/out/ran"\nexit 1\n' "$d" >"$d/evil/python3" && chmod 755 "$d/evil/python3" || exit 2
run() { setpriv --reuid=65534 --regid=65534 --clear-groups env PATH="$d/evil:/usr/bin:/bin" \
	"$d/fastclock" report "$d/in.json" -o "$d/out/r" 2>"$d/out/err"; }
fail=0
chmod 755 "$d/fastclock"
run
[ -e "$d/out/ran" ] || { echo "SKIP: the caller's python3 is not found even without set-user-ID: $(cat "$d/out/err")"; exit 77; }
rm -f "$d/out/ran"
chown 0:0 "$d/fastclock" && chmod 4755 "$d/fastclock" || exit 2
run; rc=$?
[ -e "$d/out/ran" ] && { echo "FAIL: the set-user-ID copy ran the caller's python3 (on the caller's PATH)"; fail=1; }
[ $rc -eq 1 ] && grep -q "raised privileges" "$d/out/err" ||
	{ echo "FAIL: exit $rc, want 1 naming the raised privileges: $(cat "$d/out/err")"; fail=1; }
exit $fail
