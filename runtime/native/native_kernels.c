/*
 * The executor's loop kernels (xrelay.runtime.native.library builds this file once per machine with
 * cc -O3 -march=native -ffp-contract=off and calls it through ctypes): every kernel of
 * native_template.h and native_nhwc.h (channels last; both run Winograd through
 * winograd_core.h) for float (_f32) and double (_f64), and the worker pool's spin wait.
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

/* ---- the worker pool's spin wait ---------------------------------------------------- */
#include <time.h>
static int64_t elapsed_ns(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000000000LL + (t.tv_nsec - t0->tv_nsec);
}

/* Wait until *seq != seen, for at most max_ns nanoseconds, without sleeping (called through
   ctypes, so without the GIL): 1 if it changed, else 0. A pool worker waits here between
   jobs; waking a sleeping thread costs the next job tens of microseconds on a virtual
   machine. After the change it spins settle_ns more: the thread that made the change
   still holds the GIL for a moment, and asking for it then would put this one to sleep. */
int64_t xrelay_spin_wait(volatile const int64_t *seq, int64_t seen, int64_t max_ns,
                         int64_t settle_ns) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (*seq != seen) {
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
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        if (elapsed_ns(&t0) > max_ns) return 0;
    }
}
