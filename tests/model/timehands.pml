/*
 * fastclock — the timehands publication protocol, modelled in Promela under C11 release/acquire/relaxed
 * semantics. Writer: src/hands.c fc__hands_publish() (steps W1..W4) under the try-lock of
 * src/windup.c fc__windup(). Reader: the one reader protocol of include/fastclock/fc_hand.h (steps R1..R5
 * in fc__hand_current, fc__hand_begin, fc__hand_changed and fc__hand_moved), which every reader runs (the inline
 * read forms fc__hand_read_ns .. fc__hand_read_tv, the slow paths' fc__hand_snapshot, the conversions of
 * src/convert.c). tests/model/check_steps.py checks that this file and the C code name the same steps at the
 * same functions, and that no other C file labels a reader step.
 *
 * Properties (assertions, checked in every reachable state of every interleaving and every memory choice):
 *   torn_read      a reader returns a value whose fields come from two different updates;
 *   went_back      a reader returns an older update than one it returned before;
 *   waited_on_stopped_writer
 *                  a read attempt that began after every writer stopped (finished, or stalled forever in the
 *                  middle of an update, possibly holding the lock) had to retry: a reader waiting for a writer
 *                  that is not running. (A read that began before the stall may retry once: it held a pointer
 *                  to the hand being recycled.)
 * and, with -DNP and weak fairness (pan -l -f), no non-progress cycle: every fair infinite run passes the
 * reader's progress label (a reader cannot spin forever on R4).
 *
 * ---- Memory model (what "relaxed", "release", "acquire" and the fences mean here) ----------------------
 * A view-based operational model of C11 release/acquire/relaxed atomics with fences, as in the promising
 * semantics of Kang et al. (POPL 2017) without promises:
 *   - every location keeps its whole modification order: messages 0..cnt[x]-1, each a value and a view
 *     (for every location, the newest message the writer had seen when it made this one);
 *   - every thread has a view cur (the oldest message it may still read, per location: coherence), an
 *     acquire view acq (what an acquire fence will add to cur) and, per location x, a release view rel[x]
 *     (what a relaxed store to x carries: the thread's view at its last release fence or release store to x);
 *   - a load of x may return ANY message not older than cur[x] (this is where stale values, and every
 *     reordering the fences do not forbid, come from); relaxed: cur[x] and acq advance to it (acq also takes
 *     the message's view); acquire: cur takes the message's view as well;
 *   - a store appends a message at the end of x's modification order; release: the message carries cur and
 *     rel[x] := cur; relaxed: the message carries rel[x] and only its own timestamp;
 *   - acquire fence: cur := acq; release fence: rel[x] := cur for every x.
 * This is weaker than x86-TSO and than arm64's ordering of these instructions, so a result here holds on both.
 * Assumptions (read these before trusting a result):
 *   A1 no promises: loads never read stores that are later in their own thread (load buffering). Only the
 *      writer stores, and it never loads what readers store (readers store nothing shared), so no LB cycle
 *      through this protocol exists;
 *   A2 the try-lock is one location read and written by atomic read-modify-writes (they read the newest
 *      message): acquire on success, release on unlock, as in fc__windup();
 *   A3 eventual visibility, collapsed: once every writer has stopped (finished, or stalled for good), loads
 *      return the newest message. C11 asks stores to become visible "within a reasonable amount of time"
 *      (7.17.3); without this no reader of any protocol could be shown to make progress;
 *   A4 generations: 1..GM-1 (GM is the model's 2^32), skipping 0 on wrap as fc__hands_publish() does, and
 *      starting at GM-1 so that the first rewrite of each hand wraps. U updates are chosen so that no hand is
 *      rewritten GM-1 times in a run: a reader descheduled for (GM-1)*N updates between R2 and R4 would see
 *      the same generation again (ABA). In the C code that is 2^32-1 rewrites of one hand (2^32-1 x 8
 *      re-anchor periods, > 1 year at 1 ms) inside one read of a few ns; -DABA shows the model finds it;
 *   A5 a hand is modelled by its generation and F fields; each field stores the update number, so a read
 *      that mixes updates is detected, and "older" means a smaller update number. The value arithmetic and
 *      the counter are not modelled (their monotonicity across hands is the dominance rule of track.c,
 *      tested by tests/unit, tests/sim and fuzzed by tests/fuzz/fuzz_track). The early returns of
 *      fc__hand_read_ns() (kernel hand, stale delta) go to the slow path, which runs this same protocol;
 *   A6 the boot hand of fc__hands_init() is modelled as the ring hand N-1 holding update 0, current at start,
 *      so the first publish writes ring hand 0 as in the C code.
 *
 * Variants (spin -D...). The good model must pass; each broken one must make spin report a violation:
 *   NO_MARK       W1 removed: the writer rewrites a hand without first setting gen = 0 (and its fence);
 *   PTR_FIRST     W4 (publish the pointer) done before W1..W3;
 *   NO_LOCK       two writers, no try-lock;
 *   ONE_HAND      N = 1: the writer rewrites the current hand;
 *   NO_W1_FENCE   W1's release fence removed (the mark may become visible after the fields);
 *   NO_R3_FENCE   R3's acquire fence removed;
 *   RELAXED_W3    W3 stores the generation relaxed;   RELAXED_R2   R2 loads it relaxed;
 *   RELAXED_W4    W4 stores the pointer relaxed;      RELAXED_R1   R1 loads it relaxed;
 *   NO_R5         the reader without R5 (the C code as of this model's first version): went_back is found, see
 *                 R5 below and docs/JOURNAL.md, finding F1;
 *   ABA           enough updates for a generation to come back during one read (documents assumption A4).
 * Not variants, because the model shows they are not bugs: W4 relaxed (W1's release fence already orders
 * the mark before the pointer, and R2 then needs W3) and R1 relaxed (R3's fence then orders R4 after it).
 *
 * R5 (finding F1). R1..R4 alone let a reader return a hand NEWER than the pointer it will load next: the
 * reader loads pointer h, is descheduled while the writer recycles h (N-1 updates later), and copies h
 * after W3 but before W4 of that update; its next R1 loads the previous, older hand (W4 not yet done or
 * not yet visible): that hand's value at a later count can be below the recycled hand's value (dominance
 * only bounds the new hand from below), so time goes back. R5 (re-load pub->current after R3, retry if it is
 * not h) closes this; readers still never wait on a stalled writer.
 * Sizes: -DN=hands (default 2), -DF=fields per hand (2), -DREADERS (2), -DREADS per reader (2),
 * -DWRITERS (1; 2 models two writers contending for the try-lock), -DU updates in all (4), -DGM (4).
 */

#ifndef N
#ifdef ONE_HAND
#define N 1
#else
#define N 2
#endif
#endif
#ifndef F
#define F 2
#endif
#ifndef READERS
#define READERS 2
#endif
#ifndef READS
#define READS 2
#endif
#ifndef WRITERS
#ifdef NO_LOCK
#define WRITERS 2
#else
#define WRITERS 1
#endif
#endif
#ifndef U
#ifdef ABA
#define U 7
#else
#define U 3
#endif
#endif
/* Generations 1..GM-1: the smallest modulus for which no hand is rewritten GM-1 times in U updates (A4) */
#ifndef GM
#ifdef ABA
#define GM 4
#else
#define GM ((U + N - 1) / N + 2)
#endif
#endif
#if !defined(ABA) && (U + N - 1) / N > GM - 2
#error "a hand would be rewritten GM-1 times: the generation could come back within one read (use -DABA)"
#endif

#define UPW (U / WRITERS)           /* publish attempts per writer */
#define T (READERS + WRITERS)       /* threads: readers 0..READERS-1, then writers */
#define L (1 + N * (1 + F))         /* locations: pub->current, then per hand gen and F fields */
#define M (2 * U + 1)               /* messages per location, at most (a hand's gen: 2 per rewrite) */
#define CUR 0
#define GEN(h) (1 + (h) * (1 + F))
#define FLD(h, i) (2 + (h) * (1 + F) + (i))
#define GSTART (GM - 1)             /* fc__hands_init(gen_start) next to the wrap, as the unit tests do */

/* ---- memory ---------------------------------------------------------------------------------------- */
byte cnt[L];              /* messages per location (length of its modification order) */
byte mval[L * M];         /* value of message ts of x: mval[x*M + ts] */
byte mview[L * M * L];    /* view of message ts of x: mview[(x*M + ts)*L + y] */
/* ---- threads' views ---------------------------------------------------------------------------------- */
byte cur[T * L];
byte acq[T * L];
byte rel[T * L * L];      /* rel[(t*L + x)*L + y] */
/* ---- the try-lock (assumption A2) and model bookkeeping ----------------------------------------------- */
bit locked;
byte lock_view[L];        /* view released by the last unlock */
byte nupd;                /* update numbers handed out (the writer's parameters carry it) */
byte running = WRITERS;   /* writers not yet stopped */
#define stopped (running == 0)

inline load(t, x, acquire, out)
{
	atomic {
		/* any message not older than this thread's view of x; the newest once writers stopped (A3) */
		if
		:: stopped -> ts = cnt[x] - 1
		:: else -> select(ts : cur[t * L + x] .. cnt[x] - 1)
		fi;
		skip; /* a target for the jumps above: spin rejects a jump onto a d_step inside a nested atomic */
		d_step {
			out = mval[x * M + ts];
			y = 0;
			do
			:: y < L ->
				if
				:: mview[(x * M + ts) * L + y] > acq[t * L + y] -> acq[t * L + y] = mview[(x * M + ts) * L + y]
				:: else -> skip
				fi;
				if
				:: acquire && mview[(x * M + ts) * L + y] > cur[t * L + y] -> cur[t * L + y] = mview[(x * M + ts) * L + y]
				:: else -> skip
				fi;
				y++
			:: else -> break
			od;
			cur[t * L + x] = ts;
			if
			:: acq[t * L + x] < ts -> acq[t * L + x] = ts
			:: else -> skip
			fi;
			ts = 0; y = 0
		}
	}
}

inline store(t, x, v, release)
{
	d_step {
		ts = cnt[x];
		assert(ts < M);
		cnt[x]++;
		mval[x * M + ts] = v;
		cur[t * L + x] = ts;
		acq[t * L + x] = ts;
		y = 0;
		do
		:: y < L ->
			if
			:: release -> rel[(t * L + x) * L + y] = cur[t * L + y]
			:: else -> skip
			fi;
			mview[(x * M + ts) * L + y] = rel[(t * L + x) * L + y];
			y++
		:: else -> break
		od;
		mview[(x * M + ts) * L + x] = ts;
		ts = 0; y = 0
	}
}

inline fence_acquire(t)
{
	d_step {
		y = 0;
		do
		:: y < L -> cur[t * L + y] = acq[t * L + y]; y++
		:: else -> break
		od;
		y = 0
	}
}

inline fence_release(t)
{
	d_step {
		x = 0;
		do
		:: x < L ->
			y = 0;
			do
			:: y < L -> rel[(t * L + x) * L + y] = cur[t * L + y]; y++
			:: else -> break
			od;
			x++
		:: else -> break
		od;
		x = 0; y = 0
	}
}

/* A writer may stop for good before any step that others can see (it may also pause: that is any
 * interleaving). A stall after W4 and before the unlock is, for readers, a stall before the next update and,
 * for a second writer, a stall holding the lock, which the stall points before W2..W4 already give. */
#define MAY_STALL if :: skip :: goto stall fi

/* Reset a process's scratch variables so that states that differ only in dead values are one state. */
#define CLEAR_SCRATCH ts = 0; y = 0

inline lock_acquire(t)
{
	locked = 1;
	y = 0;
	do
	:: y < L ->
		if
		:: lock_view[y] > cur[t * L + y] -> cur[t * L + y] = lock_view[y]
		:: else -> skip
		fi;
		if
		:: lock_view[y] > acq[t * L + y] -> acq[t * L + y] = lock_view[y]
		:: else -> skip
		fi;
		y++
	:: else -> break
	od;
	y = 0
}

inline lock_release(t)
{
	y = 0;
	do
	:: y < L -> lock_view[y] = cur[t * L + y]; y++
	:: else -> break
	od;
	y = 0;
	locked = 0
}

/* fc__hands_publish(): pick the hand after the current one and its next generation. Only the lock holder
 * stores pub->current, so (with the lock) its relaxed load sees the newest store; th->gen likewise. */
inline pick_hand(t)
{
	load(t, CUR, 0, h);
	th = (h + 1) % N;
	load(t, GEN(th), 0, g);
	g = (g + 1) % GM;
	if
	:: g == 0 -> g = 1 /* 0 means "being written": skip it on wrap */
	:: else -> skip
	fi;
	nupd++;
	u = nupd
}

proctype writer(byte t)
{
	byte k, h, th, g, u, ts, x, y;

	do
	:: k < UPW ->
		MAY_STALL;
#ifndef NO_LOCK
		atomic {
			/* fc__windup(): try-lock, acquire on success (A2); a writer that loses skips this
			 * re-anchor (its reader uses its hand) */
			if
			:: locked -> k++; goto next
			:: else -> lock_acquire(t)
			fi;
			pick_hand(t)
		}
#else
		/* broken: no lock; two writers may pick the same hand and generation */
		atomic { load(t, CUR, 0, h); th = (h + 1) % N }
		atomic {
			load(t, GEN(th), 0, g);
			g = (g + 1) % GM;
			if
			:: g == 0 -> g = 1
			:: else -> skip
			fi;
			nupd++;
			u = nupd
		}
#endif
#ifdef PTR_FIRST
		MAY_STALL;
		store(t, CUR, th, 1); /* broken: the pointer is published before the hand is written */
		printf("MSC: writer %d W4 (first) hand %d update %d: current\n", t, th, u);
#endif
#ifndef NO_MARK
		MAY_STALL;
		/* W1: fc__hands_publish() marks the hand as being written (gen = 0, relaxed), then a release fence
		 * orders the mark before every field store (one step: the fence changes nothing others can see
		 * until the writer's next store) */
		atomic {
			store(t, GEN(th), 0, 0);
#ifndef NO_W1_FENCE
			fence_release(t);
#endif
			printf("MSC: writer %d W1 hand %d update %d: gen 0\n", t, th, u)
		}
#endif
		/* W2: fc__hands_publish() writes the fields, relaxed; each store is a step, and the writer may stall
		 * between any two */
		x = 0;
		do
		:: x < F ->
			MAY_STALL;
			store(t, FLD(th, x), u, 0);
			x++
		:: else -> x = 0; break
		od;
		MAY_STALL;
		/* W3: fc__hands_publish() publishes the generation with release (pairs with R2) */
#ifdef RELAXED_W3
		store(t, GEN(th), g, 0);
#else
		store(t, GEN(th), g, 1);
#endif
		printf("MSC: writer %d W3 hand %d update %d: gen %d\n", t, th, u, g);
		MAY_STALL;
		atomic {
#ifndef PTR_FIRST
			/* W4: fc__hands_publish() makes the hand current with release (pairs with R1) */
#ifdef RELAXED_W4
			store(t, CUR, th, 0);
#else
			store(t, CUR, th, 1);
#endif
			printf("MSC: writer %d W4 hand %d update %d: current\n", t, th, u);
#endif
#ifndef NO_LOCK
			/* fc__windup(): unlock, release */
			lock_release(t);
#endif
			k++; h = 0; th = 0; g = 0; u = 0
		}
next:		skip
	:: else -> break
	od;
stall:	skip;
	d_step { running--; k = 0; h = 0; th = 0; g = 0; u = 0; x = 0 }
}

proctype reader(byte t)
{
	byte n, h, h2, g, g2, last, ts, x, y;
	byte v[F];
	bit after_stop, torn_read, went_back, waited_on_stopped_writer;

	do
	:: n < READS ->
retry:
		/* R1: fc__hand_current() loads pub->current with acquire (pairs with W4) */
		atomic {
			after_stop = stopped;
#ifdef RELAXED_R1
			load(t, CUR, 0, h)
#else
			load(t, CUR, 1, h)
#endif
		}
		/* R2: fc__hand_begin() loads the generation with acquire (pairs with W3) */
#ifdef RELAXED_R2
		load(t, GEN(h), 0, g);
#else
		load(t, GEN(h), 1, g);
#endif
		/* copy the fields, relaxed (each reader's FC__LOADs between R2 and R3) */
		x = 0;
		do
		:: x < F -> load(t, FLD(h, x), 0, v[x]); x++
		:: else -> x = 0; break
		od;
		atomic {
			/* R3: fc__hand_changed() issues an acquire fence (pairs with W1's release fence; one step with
			 * R4: the fence only changes what this reader's next load may see) */
#ifndef NO_R3_FENCE
			fence_acquire(t);
#endif
			/* R4: fc__hand_changed() reloads the generation (relaxed) and retries on 0 or on a change */
			load(t, GEN(h), 0, g2);
			printf("MSC: reader %d hand %d gen %d..%d fields %d %d\n", t, h, g, g2, v[0], v[F - 1]);
			if
			:: g == 0 || g != g2 ->
				waited_on_stopped_writer = after_stop;
#ifndef LIVENESS
				assert(!waited_on_stopped_writer);
#endif
				h = 0; g = 0; g2 = 0; after_stop = 0;
				do :: x < F -> v[x] = 0; x++ :: else -> x = 0; break od;
				goto retry
			:: else -> skip
			fi
		}
#ifndef NO_R5
		/* R5: fc__hand_moved() reloads pub->current (relaxed, after R3) and retries if it no longer
		 * points at this hand: a hand recycled under the reader may hold an update whose W4 the
		 * reader does not see yet, so its next R1 could load the previous (older) hand */
		atomic {
			load(t, CUR, 0, h2);
			if
			:: h2 != h ->
				waited_on_stopped_writer = after_stop;
#ifndef LIVENESS
				assert(!waited_on_stopped_writer);
#endif
				h = 0; h2 = 0; g = 0; g2 = 0; after_stop = 0;
				do :: x < F -> v[x] = 0; x++ :: else -> x = 0; break od;
				goto retry
			:: else -> skip
			fi
		}
#endif
progress:
		d_step {
			x = 1;
			do
			:: x < F -> torn_read = torn_read || v[x] != v[0]; x++
			:: else -> x = 0; break
			od;
			went_back = v[0] < last;
			assert(!torn_read);
			assert(!went_back);
			last = v[0]; n++; h = 0; h2 = 0; g = 0; g2 = 0; after_stop = 0;
			do :: x < F -> v[x] = 0; x++ :: else -> x = 0; break od
		}
	:: else -> break
	od
}

init
{
	byte h, i, t, ts, x, y;
	atomic {
		/* one message per location, seen by everyone (views all 0) */
		x = 0;
		do
		:: x < L -> cnt[x] = 1; x++
		:: else -> x = 0; break
		od;
		mval[CUR * M] = N - 1;
		h = 0;
		do
		:: h < N ->
			mval[GEN(h) * M] = GSTART;
			i = 0;
			do
			:: i < F -> mval[FLD(h, i) * M] = 0; i++ /* update 0 */
			:: else -> break
			od;
			h++
		:: else -> break
		od;
		t = 0;
		do
		:: t < READERS -> run reader(t); t++
		:: else -> break
		od;
		do
		:: t < T -> run writer(t); t++
		:: else -> break
		od
	}
}
