// tsan_handing_over / tsan_taken_over: an rte_ring hand-over declared to ThreadSanitizer. rte_ring
// orders with x86 ordering and compiler barriers TSan cannot see; under TSan the hand-over is
// declared (a release before the enqueue, an acquire after the dequeue, on the ring), so it sees
// the order the ring gives and no more. Nothing in other builds.
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DROCE_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define DROCE_TSAN 1
#endif

#ifdef DROCE_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace droce::engine {

#ifdef DROCE_TSAN
inline void tsan_handing_over(void* ring) { __tsan_release(ring); }
inline void tsan_taken_over(void* ring) { __tsan_acquire(ring); }
#else
inline void tsan_handing_over(void*) {}
inline void tsan_taken_over(void*) {}
#endif

}  // namespace droce::engine
