/*
 * The executor's loop kernels (xrelay.runtime.native.library builds this file once per machine with
 * cc -O3 -march=native -ffp-contract=off and calls it through ctypes): every kernel of
 * native_template.h and native_nhwc.h (channels last; both run Winograd through
 * winograd_core.h) for float (_f32) and double (_f64), the elementwise loops of native_loop.h, and
 * the worker pool's spin wait.
 */
#include <math.h>
#include <stdint.h>
typedef int64_t i64;

#define SFX_CAT(name, sfx) name##_##sfx

#define REAL float
#define SFX(name) SFX_CAT(name, f32)
#include "winograd_core.h"
#include "native_template.h"
#include "native_nhwc.h"
#undef REAL
#undef SFX

#define REAL double
#define SFX(name) SFX_CAT(name, f64)
#include "winograd_core.h"
#include "native_template.h"
#include "native_nhwc.h"
#undef REAL
#undef SFX

#include "native_loop.h" /* elementwise loops (float32) */

/* ---- the worker pool's spin wait ---------------------------------------------------- */
#include <time.h>
static int64_t elapsed_ns(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000000000LL + (t.tv_nsec - t0->tv_nsec);
}

/* ---- native jobs: chunks of C kernels the workers run without Python ---------------------
 * xrelay_native_run(fn, job, parts, slots) runs fn(job, part, slot) for every part in
 * [0, parts): the calling thread and every worker waiting in xrelay_spin_wait claim parts
 * from one counter, so a chunk starts within a spin of being posted -- no GIL, no Python
 * (a Python chunk waits for the GIL twice, ~10 us a job on this machine, longer than many
 * int8 layers take). slot is the thread's index among those taking part in this job, below
 * `slots` (a kernel's per-thread buffers); a worker beyond it takes no part.
 * One job at a time: a caller that finds one running runs its own parts serially. The
 * claim counter holds the job's generation in its high 32 bits, so a worker that read an
 * older job can never claim a part of a newer one (the caller closes the counter before it
 * rewrites the job). Returns the parts other threads ran, or -1 when no worker was waiting
 * (none could help: the caller ran every part). */
#include <stdatomic.h>
typedef void (*xrelay_part_fn)(const void *job, int64_t part, int64_t slot);
/* the claim word: generation << 32 | slots taken << 24 | next part */
#define XR_PART_MASK 0xffffffLL
#define XR_SLOT_ONE (1LL << 24)
static struct {
    _Atomic int64_t gen, claim, done, serving, busy, parts, slots;
    _Atomic(xrelay_part_fn) fn;
    _Atomic(const void *) job;
} xr_native;

/* Take a slot, then parts, of generation g while there are any; the number taken. */
static int64_t xr_native_help(int64_t g) {
    const xrelay_part_fn fn = atomic_load(&xr_native.fn);
    const void *job = atomic_load(&xr_native.job);
    const int64_t parts = atomic_load(&xr_native.parts), slots = atomic_load(&xr_native.slots);
    int64_t v = atomic_load(&xr_native.claim), slot, taken = 0;
    for (;;) {
        if ((v >> 32) != g || (v & XR_PART_MASK) >= parts || ((v >> 24) & 0xff) >= slots) return 0;
        if (atomic_compare_exchange_weak(&xr_native.claim, &v, v + XR_SLOT_ONE)) {
            slot = (v >> 24) & 0xff;
            break;
        }
    }
    v = atomic_load(&xr_native.claim);
    while ((v >> 32) == g && (v & XR_PART_MASK) < parts) {
        if (!atomic_compare_exchange_weak(&xr_native.claim, &v, v + 1)) continue;
        fn(job, v & XR_PART_MASK, slot);
        atomic_fetch_add(&xr_native.done, 1);
        ++taken;
        v = atomic_load(&xr_native.claim);
    }
    return taken;
}

int64_t xrelay_native_run(void *fn, const void *job, int64_t parts, int64_t slots) {
    int64_t idle = 0;
    if (parts > 1 && parts < XR_PART_MASK && slots > 1 && atomic_compare_exchange_strong(&xr_native.busy, &idle, 1)) {
        const int64_t serving = atomic_load(&xr_native.serving);
        const int64_t g = (atomic_load(&xr_native.gen) + 1) & 0x7fffffffLL;
        atomic_store(&xr_native.claim, (g << 32) | XR_PART_MASK); /* no part of the old job now */
        atomic_store(&xr_native.fn, (xrelay_part_fn)fn);
        atomic_store(&xr_native.job, job);
        atomic_store(&xr_native.parts, parts);
        atomic_store(&xr_native.slots, slots);
        atomic_store(&xr_native.done, 0);
        atomic_store(&xr_native.gen, g);
        atomic_store(&xr_native.claim, g << 32);
        const int64_t mine = xr_native_help(g);
        while (atomic_load(&xr_native.done) < parts) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        atomic_store(&xr_native.busy, 0);
        return parts > mine ? parts - mine : (serving > 0 ? 0 : -1);
    }
    for (int64_t i = 0; i < parts; ++i) ((xrelay_part_fn)fn)(job, i, 0);
    return 0;
}

/* xrelay_native_run for each of n jobs in turn, jobs[4i .. 4i + 3] = (fn, job, parts, slots):
 * a run of consecutive native jobs in one call, with no return to Python between them (each
 * job still ends when all its parts are done, so the next reads its results). Returns -1 when
 * the last job found no worker waiting, else how many of the jobs other threads helped with. */
int64_t xrelay_native_chain(const int64_t *jobs, int64_t n) {
    int64_t shared = 0, last = 0;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t *q = jobs + 4 * i;
        last = xrelay_native_run((void *)(intptr_t)q[0], (const void *)(intptr_t)q[1], q[2], q[3]);
        shared += last > 0;
    }
    return last < 0 ? -1 : shared;
}

/* A native job of C calls (xrelay.runtime.native.library.c_call): part p calls the function
 * of row p of the table `job` with that row's arguments, without Python. Row p holds the
 * function's address, XR_CALL_INTS integer-class arguments (pointers and integers, in order)
 * and XR_CALL_FPS floating-point ones (in order, each as the raw bits of a double, or of a
 * float in the low 32 bits). The call passes every slot, as the function pointer type below:
 * on the System V x86-64 and AAPCS64 calling conventions (the only ones library.py lets
 * build such a row) the integer-class and floating-point arguments fill their own register
 * files in order and the integer ones beyond the registers go to the stack in order, 8 bytes
 * each, so the callee finds its own parameters where it looks and never reads the extra
 * slots (which the caller pushes and removes). A float parameter reads the low 32 bits of its
 * vector register. */
#include <string.h>
#define XR_CALL_INTS 24
#define XR_CALL_FPS 8
#define XR_CALL_WIDTH (1 + XR_CALL_INTS + XR_CALL_FPS)
typedef void (*xr_call_fn)(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64,
                           i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, double, double,
                           double, double, double, double, double, double);

int64_t xrelay_call_width(void) { return XR_CALL_WIDTH; }

void xrelay_call_part(const void *job, int64_t part, int64_t slot) {
    (void)slot;
    const int64_t *r = (const int64_t *)job + part * XR_CALL_WIDTH, *a = r + 1;
    double d[XR_CALL_FPS];
    memcpy(d, r + 1 + XR_CALL_INTS, sizeof d);
    ((xr_call_fn)(intptr_t)r[0])(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                                 a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19],
                                 a[20], a[21], a[22], a[23], d[0], d[1], d[2], d[3], d[4], d[5],
                                 d[6], d[7]);
}

/* Wait until *seq != seen, for at most max_ns nanoseconds, without sleeping (called through
   ctypes, so without the GIL): 1 if it changed, else 0. A pool worker waits here between
   jobs; waking a sleeping thread costs the next job tens of microseconds on a virtual
   machine. Meanwhile it takes parts of the native jobs posted (xrelay_native_run), the one
   in flight when it comes included, and waits max_ns from the end of the last one. After the change it spins settle_ns more: the thread that made
   the change still holds the GIL for a moment, and asking for it then would put this one to
   sleep. */
int64_t xrelay_spin_wait(volatile const int64_t *seq, int64_t seen, int64_t max_ns,
                         int64_t settle_ns) {
    struct timespec t0;
    int64_t served = -1; /* a job in flight when this thread comes is joined too */
    atomic_fetch_add(&xr_native.serving, 1);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (*seq != seen) {
                atomic_fetch_sub(&xr_native.serving, 1);
                if (settle_ns > 0) {
                    struct timespec t1;
                    clock_gettime(CLOCK_MONOTONIC, &t1);
                    while (elapsed_ns(&t1) < settle_ns) {
#if defined(__x86_64__) || defined(__i386__)
                        __builtin_ia32_pause();
#endif
                    }
                }
                return 1;
            }
            const int64_t g = atomic_load(&xr_native.gen);
            if (g != served) {
                served = g;
                xr_native_help(g);
            }
            if (atomic_load(&xr_native.busy)) clock_gettime(CLOCK_MONOTONIC, &t0); /* max_ns from the last job's end */
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        if (elapsed_ns(&t0) > max_ns) {
            atomic_fetch_sub(&xr_native.serving, 1);
            return 0;
        }
    }
}
