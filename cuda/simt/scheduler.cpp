// The SIMT scheduler: runs a kernel's blocks one after another on the launching host thread;
// inside a block, every CUDA thread is a fiber, so __syncthreads and the warp operations are
// real rendezvous of the threads that take part.
//
// Fiber mechanism: each fiber's context is made once with makecontext (glibc ucontext); every
// switch after that is _setjmp/_longjmp. swapcontext saves and restores the signal mask with a
// system call per switch; _longjmp does not, which makes a switch a few nanoseconds.
// Fibers are a pool: a fiber runs one CUDA thread at a time and, when that thread ends, goes on
// with the next thread not yet started, so a kernel without barriers costs no switch per thread.
//
// Misuse ends in a deadlock (nothing can run, some threads have not finished): the scheduler
// describes it, cancels the blocked threads (a Cancel exception unwinds each fiber's stack) and
// throws std::runtime_error naming the kernel. The simulator is then ready for the next launch.

// __longjmp_chk (what _FORTIFY_SOURCE turns _longjmp into) aborts on jumps between stacks.
#undef _FORTIFY_SOURCE

#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/runtime/compat.h"

#if defined(__SANITIZE_ADDRESS__)
#define HULK_SIMT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HULK_SIMT_ASAN 1
#endif
#endif
#ifdef HULK_SIMT_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace hulk::simt {
namespace {

// Device limits mirrored from CUDA (compute capability 8.0/9.0).
constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr unsigned kMaxBlockXY = 1024;
constexpr unsigned kMaxBlockZ = 64;
constexpr unsigned long long kMaxGridX = 2147483647ull;
constexpr unsigned kMaxGridYZ = 65535;
// Stack of one simulated thread; pages are committed only when touched.
constexpr size_t kStackBytes = 256 * 1024;
// Spins with no other runnable thread before a spin-wait is called a deadlock (~0.1 s).
constexpr long long kMaxLonelySpins = 1ll << 24;

// Thrown inside a blocked fiber to unwind it when its block is abandoned. Not a std::exception,
// so kernel code that catches std::exception does not swallow it.
struct Cancel {};

enum class State : unsigned char { not_started, running, ready, at_barrier, at_warp, at_activemask, done };

struct Fiber {
  jmp_buf jb;
  void* stack = nullptr;
  size_t stack_bytes = 0;
  int thread = -1;  // the CUDA thread (linear id in the block) it runs; -1 when free
#ifdef HULK_SIMT_ASAN
  void* fake_stack = nullptr;
#endif
};

struct Thread {
  State state = State::not_started;
  Fiber* fiber = nullptr;
  int barrier_count = 0;  // the number of true predicates at the barrier that released it
  unsigned active_mask = 0;
  unsigned long long steps = 0;  // detail::tls_steps while another thread runs
};

struct Lane {
  detail::WarpOp op;
  unsigned mask;  // the lanes that take part (the call's mask less lanes the block does not have)
  unsigned requested_mask;
  unsigned long long payload;
  int arg;
  int width;
  unsigned long long result;
};

struct Warp {
  unsigned exists = 0;   // lanes the block has
  unsigned pending = 0;  // lanes waiting in a warp operation
  unsigned activemask_waiters = 0;
  Lane lanes[32];
};

const char* op_name(detail::WarpOp op) {
  switch (op) {
    case detail::WarpOp::sync: return "__syncwarp";
    case detail::WarpOp::shfl_idx: return "__shfl_sync";
    case detail::WarpOp::shfl_up: return "__shfl_up_sync";
    case detail::WarpOp::shfl_down: return "__shfl_down_sync";
    case detail::WarpOp::shfl_xor: return "__shfl_xor_sync";
    case detail::WarpOp::ballot: return "__ballot_sync";
    case detail::WarpOp::any: return "__any_sync";
    case detail::WarpOp::all: return "__all_sync";
    case detail::WarpOp::reduce_add: return "__reduce_add_sync";
    case detail::WarpOp::reduce_min_i:
    case detail::WarpOp::reduce_min_u: return "__reduce_min_sync";
    case detail::WarpOp::reduce_max_i:
    case detail::WarpOp::reduce_max_u: return "__reduce_max_sync";
    case detail::WarpOp::reduce_and: return "__reduce_and_sync";
    case detail::WarpOp::reduce_or: return "__reduce_or_sync";
    case detail::WarpOp::reduce_xor: return "__reduce_xor_sync";
    case detail::WarpOp::match_any: return "__match_any_sync";
    case detail::WarpOp::match_all: return "__match_all_sync";
  }
  return "warp operation";
}

std::string hex_mask(unsigned m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", m);
  return buf;
}

class Simulator {
 public:
  ~Simulator() {
    for (auto& f : fibers_) munmap(f->stack, f->stack_bytes);
  }

  void run(const char* name, dim3 grid, dim3 block, size_t shared_bytes, void (*thunk)(void*), void* ctx);

  // ---- called from kernels (on a fiber) ----
  void syncthreads(detail::BarrierOp op, int predicate, int* result);
  unsigned long long warp_op(detail::WarpOp op, unsigned mask, unsigned long long payload, int arg, int width);
  unsigned activemask();
  void yield();
  unsigned char* dynamic_shared() const { return shared_; }
  bool in_kernel() const { return current_ >= 0; }
  [[noreturn]] void fail(const std::string& what) const { fail_in(current_, what); }
  [[noreturn]] void fail_in(int thread, const std::string& what) const;

 private:
  // Every lane of warp w's group `m` has arrived at `op`: each lane's result.
  void resolve_warp_group(Warp& w, detail::WarpOp op, unsigned m, int t, unsigned long long my_payload) const;
  static void fiber_entry();
  [[noreturn]] void fiber_loop(Fiber* self);
  Fiber* new_fiber();
  void resume(int t);
  void block_current(State s);
  void start_thread(int t, Fiber* f);
  // Odd blocks start their threads from the last one: a read that relies on an unsynchronised
  // write by a lower (even blocks: higher) thread id then sees stale data in one of the two.
  int start_order(int k) const { return reverse_ ? n_ - 1 - k : k; }
  void run_block();
  void abandon_block();
  bool resolve_activemask();
  std::string where() const;
  std::string thread_name(int t) const;
  std::string describe_deadlock() const;

 public:
  bool recording_ = false;
  std::vector<LaunchSteps> recorded_;

 private:
  // ---- launch ----
  const char* name_ = "";
  LaunchSteps steps_;
  void (*thunk_)(void*) = nullptr;
  void* ctx_ = nullptr;
  unsigned char* shared_ = nullptr;
  size_t shared_bytes_ = 0;

  // ---- block ----
  int n_ = 0;
  int next_unstarted_ = 0;
  bool reverse_ = false;
  int done_ = 0;
  int current_ = -1;  // the running thread; -1 on the scheduler
  int barrier_arrived_ = 0;
  int barrier_true_ = 0;
  long long lonely_spins_ = 0;
  bool cancelling_ = false;
  std::exception_ptr error_;
  int error_thread_ = -1;
  std::vector<Thread> threads_;
  std::vector<Warp> warps_;
  std::deque<int> ready_;
  std::deque<int> yielded_;

  // ---- fibers ----
  jmp_buf scheduler_jb_;
  std::vector<std::unique_ptr<Fiber>> fibers_;
  std::vector<Fiber*> free_;
#ifdef HULK_SIMT_ASAN
  void* scheduler_fake_stack_ = nullptr;
  const void* scheduler_stack_bottom_ = nullptr;
  size_t scheduler_stack_size_ = 0;
#endif
};

thread_local Simulator* tls_creating_sim = nullptr;
thread_local Fiber* tls_creating_fiber = nullptr;
thread_local ucontext_t tls_creator_uc;

Simulator& simulator() {
  thread_local Simulator sim;
  return sim;
}

// ---- switching ------------------------------------------------------------------------------
// Kept out of line: the caller's locals are then in memory or callee-saved registers, which
// _setjmp/_longjmp preserve, and nothing in these functions changes between the two.

__attribute__((noinline)) void switch_to_fiber(jmp_buf from, Fiber* to) {
#ifdef HULK_SIMT_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, to->stack, to->stack_bytes);
#endif
  if (_setjmp(from) == 0) _longjmp(to->jb, 1);
#ifdef HULK_SIMT_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

#ifdef HULK_SIMT_ASAN
thread_local const void* tls_sched_bottom = nullptr;
thread_local size_t tls_sched_size = 0;
#endif

__attribute__((noinline)) void switch_to_scheduler(Fiber* from, jmp_buf to) {
#ifdef HULK_SIMT_ASAN
  __sanitizer_start_switch_fiber(&from->fake_stack, tls_sched_bottom, tls_sched_size);
#endif
  if (_setjmp(from->jb) == 0) _longjmp(to, 1);
#ifdef HULK_SIMT_ASAN
  __sanitizer_finish_switch_fiber(from->fake_stack, &tls_sched_bottom, &tls_sched_size);
#endif
}

void Simulator::fiber_entry() {
  Simulator* sim = tls_creating_sim;
  Fiber* self = tls_creating_fiber;
#ifdef HULK_SIMT_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &tls_sched_bottom, &tls_sched_size);
#endif
  // Park here: later resumes land on this _setjmp, on this fiber's stack.
  if (_setjmp(self->jb) == 0) {
#ifdef HULK_SIMT_ASAN
    __sanitizer_start_switch_fiber(&self->fake_stack, tls_sched_bottom, tls_sched_size);
#endif
    setcontext(&tls_creator_uc);
  }
#ifdef HULK_SIMT_ASAN
  __sanitizer_finish_switch_fiber(self->fake_stack, &tls_sched_bottom, &tls_sched_size);
#endif
  sim->fiber_loop(self);
}

Fiber* Simulator::new_fiber() {
  auto f = std::make_unique<Fiber>();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  f->stack_bytes = kStackBytes + page;
  f->stack = mmap(nullptr, f->stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                  -1, 0);
  if (f->stack == MAP_FAILED) throw std::runtime_error("SIMT: cannot map a fiber stack");
  // Guard page: a thread that overflows its stack faults instead of corrupting a neighbour.
  mprotect(f->stack, page, PROT_NONE);

  ucontext_t uc;
  getcontext(&uc);
  uc.uc_stack.ss_sp = f->stack;
  uc.uc_stack.ss_size = f->stack_bytes;
  uc.uc_link = nullptr;
  makecontext(&uc, &Simulator::fiber_entry, 0);
  tls_creating_sim = this;
  tls_creating_fiber = f.get();
#ifdef HULK_SIMT_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f->stack, f->stack_bytes);
#endif
  swapcontext(&tls_creator_uc, &uc);  // runs fiber_entry up to its park point
#ifdef HULK_SIMT_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  fibers_.push_back(std::move(f));
  return fibers_.back().get();
}

void Simulator::start_thread(int t, Fiber* f) {
  f->thread = t;
  threads_[t].fiber = f;
}

void Simulator::resume(int t) {
  Thread& th = threads_[t];
  th.state = State::running;
  current_ = t;
  const dim3 b = detail::tls.block_dim;
  detail::tls.thread_idx = uint3{t % b.x, (t / b.x) % b.y, t / (b.x * b.y)};
  detail::tls_steps = th.steps;
  switch_to_fiber(scheduler_jb_, th.fiber);
  current_ = -1;
}

void Simulator::block_current(State s) {
  Thread& th = threads_[current_];
  th.state = s;
  th.steps = detail::tls_steps;
  switch_to_scheduler(th.fiber, scheduler_jb_);
  if (cancelling_) throw Cancel{};
}

void Simulator::fiber_loop(Fiber* self) {
  for (;;) {
    const int t = self->thread;
    try {
      thunk_(ctx_);
    } catch (const Cancel&) {
    } catch (...) {
      if (!error_) {
        error_ = std::current_exception();
        error_thread_ = t;
      }
    }
    threads_[t].state = State::done;
    threads_[t].fiber = nullptr;
    threads_[t].steps = detail::tls_steps;
    ++done_;
    if (!error_ && !cancelling_ && next_unstarted_ < n_) {
      // Go straight on with the next thread: no switch for threads that never wait.
      const int next = start_order(next_unstarted_++);
      start_thread(next, self);
      threads_[next].state = State::running;
      detail::tls_steps = 0;
      current_ = next;
      const dim3 b = detail::tls.block_dim;
      detail::tls.thread_idx = uint3{next % b.x, (next / b.x) % b.y, next / (b.x * b.y)};
      continue;
    }
    self->thread = -1;
    free_.push_back(self);
    switch_to_scheduler(self, scheduler_jb_);
  }
}

// ---- barriers and warp operations --------------------------------------------------------------

void Simulator::syncthreads(detail::BarrierOp op, int predicate, int* result) {
  Thread& me = threads_[current_];
  ++barrier_arrived_;
  if (predicate) ++barrier_true_;
  if (barrier_arrived_ == n_) {
    const int count = barrier_true_;
    barrier_arrived_ = 0;
    barrier_true_ = 0;
    for (int t = 0; t < n_; ++t) {
      if (threads_[t].state == State::at_barrier) {
        threads_[t].state = State::ready;
        threads_[t].barrier_count = count;
        ready_.push_back(t);
      }
    }
    me.barrier_count = count;
  } else {
    block_current(State::at_barrier);
  }
  if (result) {
    const int count = threads_[current_].barrier_count;
    switch (op) {
      case detail::BarrierOp::count: *result = count; break;
      case detail::BarrierOp::and_: *result = count == n_; break;
      case detail::BarrierOp::or_: *result = count > 0; break;
      case detail::BarrierOp::sync: break;
    }
  }
}

unsigned long long Simulator::warp_op(detail::WarpOp op, unsigned mask, unsigned long long payload, int arg,
                                      int width) {
  const int t = current_;
  const int lane = t & 31;
  Warp& w = warps_[t >> 5];
  if (!((mask >> lane) & 1u)) {
    fail(std::string(op_name(op)) + " with mask " + hex_mask(mask) + " called by lane " + std::to_string(lane) +
         ", which is not in the mask (a lane must name itself)");
  }
  if (width < 1 || width > 32 || (width & (width - 1)) != 0) {
    fail(std::string(op_name(op)) + " with width " + std::to_string(width) +
         " (the width must be a power of two from 1 to 32)");
  }
  const unsigned m = mask & w.exists;
  Lane& me = w.lanes[lane];
  me = Lane{op, m, mask, payload, arg, width, 0};
  w.pending |= 1u << lane;
  if ((w.pending & m) != m) {
    block_current(State::at_warp);
    return w.lanes[lane].result;
  }
  for (unsigned rest = m; rest; rest &= rest - 1) {
    if (w.lanes[__builtin_ctz(rest)].mask != m) {  // a lane of ours waits in another group
      block_current(State::at_warp);
      return w.lanes[lane].result;
    }
  }
  // Every lane of the group is here, with the same mask.
  for (unsigned rest = m; rest; rest &= rest - 1) {
    const int l = __builtin_ctz(rest);
    if (w.lanes[l].op != op) {
      fail(std::string("lanes of warp ") + std::to_string(t >> 5) + " disagree on the warp operation: lane " +
           std::to_string(lane) + " calls " + op_name(op) + ", lane " + std::to_string(l) + " calls " +
           op_name(w.lanes[l].op) + " (mask " + hex_mask(m) + ")");
    }
  }
  resolve_warp_group(w, op, m, t, me.payload);
  w.pending &= ~m;
  const int base = t & ~31;
  for (unsigned rest = m & ~(1u << lane); rest; rest &= rest - 1) {
    const int other = base + __builtin_ctz(rest);
    threads_[other].state = State::ready;
    ready_.push_back(other);
  }
  return me.result;
}

// Votes and 32-bit reductions over the group (signed or unsigned order as the op says),
// matches, and shuffles as PTX shfl.sync defines them.
void Simulator::resolve_warp_group(Warp& w, detail::WarpOp op, unsigned m, int t, unsigned long long my_payload) const {
  unsigned votes = 0;
  bool all_same = true;
  unsigned r_add = 0, r_and = ~0u, r_or = 0, r_xor = 0, r_min_u = ~0u, r_max_u = 0;
  int r_min_i = 2147483647, r_max_i = -2147483647 - 1;
  for (unsigned rest = m; rest; rest &= rest - 1) {
    const int l = __builtin_ctz(rest);
    const unsigned long long p = w.lanes[l].payload;
    if (p) votes |= 1u << l;
    if (p != my_payload) all_same = false;
    const auto u = static_cast<unsigned>(p);
    const auto i = static_cast<int>(u);
    r_add += u;
    r_and &= u;
    r_or |= u;
    r_xor ^= u;
    r_min_u = std::min(r_min_u, u);
    r_max_u = std::max(r_max_u, u);
    r_min_i = std::min(r_min_i, i);
    r_max_i = std::max(r_max_i, i);
  }
  for (unsigned rest = m; rest; rest &= rest - 1) {
    const int l = __builtin_ctz(rest);
    Lane& x = w.lanes[l];
    switch (op) {
      case detail::WarpOp::sync: x.result = 0; break;
      case detail::WarpOp::ballot: x.result = votes; break;
      case detail::WarpOp::any: x.result = votes != 0; break;
      case detail::WarpOp::all: x.result = votes == m; break;
      case detail::WarpOp::reduce_add: x.result = r_add; break;
      case detail::WarpOp::reduce_min_i: x.result = static_cast<unsigned>(r_min_i); break;
      case detail::WarpOp::reduce_min_u: x.result = r_min_u; break;
      case detail::WarpOp::reduce_max_i: x.result = static_cast<unsigned>(r_max_i); break;
      case detail::WarpOp::reduce_max_u: x.result = r_max_u; break;
      case detail::WarpOp::reduce_and: x.result = r_and; break;
      case detail::WarpOp::reduce_or: x.result = r_or; break;
      case detail::WarpOp::reduce_xor: x.result = r_xor; break;
      case detail::WarpOp::match_all: x.result = all_same ? m : 0u; break;
      case detail::WarpOp::match_any: {
        unsigned same = 0;
        for (unsigned r2 = m; r2; r2 &= r2 - 1) {
          const int k = __builtin_ctz(r2);
          if (w.lanes[k].payload == x.payload) same |= 1u << k;
        }
        x.result = same;
        break;
      }
      default: {
        // PTX shfl.sync: c = ((32 - width) << 8) | (up ? 0 : 0x1f); the segment mask is
        // 32 - width, the lane offset uses its low 5 bits, and an out-of-range source gives
        // the caller's own value.
        const int seg = (32 - x.width) & 31;
        const int bval = x.arg & 31;
        const int min_lane = l & seg;
        const int max_lane = op == detail::WarpOp::shfl_up ? min_lane : (min_lane | (31 & ~seg));
        int j = l;
        bool in_range = true;
        switch (op) {
          case detail::WarpOp::shfl_idx: j = min_lane | (bval & ~seg); in_range = j <= max_lane; break;
          case detail::WarpOp::shfl_up: j = l - bval; in_range = j >= max_lane; break;
          case detail::WarpOp::shfl_down: j = l + bval; in_range = j <= max_lane; break;
          case detail::WarpOp::shfl_xor: j = l ^ bval; in_range = j <= max_lane; break;
          default: break;
        }
        if (!in_range) j = l;
        if (!((m >> j) & 1u)) {
          fail_in((t & ~31) + l, std::string(op_name(op)) + ": lane " + std::to_string(l) + " reads lane " + std::to_string(j) +
               ", which does not take part (mask " + hex_mask(x.requested_mask) + ", lanes of the block " +
               hex_mask(w.exists) + "); CUDA returns an undefined value there");
        }
        x.result = w.lanes[j].payload;
      }
    }
  }
}

unsigned Simulator::activemask() {
  const int t = current_;
  warps_[t >> 5].activemask_waiters |= 1u << (t & 31);
  block_current(State::at_activemask);
  return threads_[t].active_mask;
}

// Lets the other threads of the block run first (a spin-wait on a failed atomicCAS, __nanosleep):
// on a GPU they run concurrently, here the spinning thread would otherwise never give way.
// A thread that spins while no other thread can run waits for memory nobody will change.
void Simulator::yield() {
  if (ready_.empty() && next_unstarted_ >= n_ && yielded_.empty()) {
    if (++lonely_spins_ > kMaxLonelySpins) {
      fail("spins (failed atomicCAS or __nanosleep) while no other thread of the block can run: it waits "
           "for something no thread will do (a deadlock; a GPU would hang)");
    }
    return;
  }
  lonely_spins_ = 0;
  yielded_.push_back(current_);  // runs after the ready and the unstarted threads
  block_current(State::ready);
}

bool Simulator::resolve_activemask() {
  bool any = false;
  for (size_t wi = 0; wi < warps_.size(); ++wi) {
    Warp& w = warps_[wi];
    if (!w.activemask_waiters) continue;
    for (unsigned rest = w.activemask_waiters; rest; rest &= rest - 1) {
      const int t = static_cast<int>(wi) * 32 + __builtin_ctz(rest);
      threads_[t].active_mask = w.activemask_waiters;
      threads_[t].state = State::ready;
      ready_.push_back(t);
    }
    w.activemask_waiters = 0;
    any = true;
  }
  return any;
}

// ---- errors ---------------------------------------------------------------------------------

std::string Simulator::thread_name(int t) const {
  const dim3 b = detail::tls.block_dim;
  std::ostringstream s;
  s << "thread (" << t % b.x << "," << (t / b.x) % b.y << "," << t / (b.x * b.y) << ")";
  return s.str();
}

std::string Simulator::where() const {
  const uint3 b = detail::tls.block_idx;
  std::ostringstream s;
  s << "SIMT: kernel '" << name_ << "', block (" << b.x << "," << b.y << "," << b.z << ")";
  return s.str();
}

void Simulator::fail_in(int thread, const std::string& what) const {
  if (thread < 0) throw std::runtime_error(where() + ": " + what);
  throw std::runtime_error(where() + ", " + thread_name(thread) + ": " + what);
}

std::string Simulator::describe_deadlock() const {
  std::ostringstream s;
  s << where() << " cannot finish: ";
  int at_barrier = 0, exited = 0, at_warp = 0, first_exited = -1, first_warp = -1;
  for (int t = 0; t < n_; ++t) {
    const State st = threads_[t].state;
    if (st == State::at_barrier) ++at_barrier;
    if (st == State::done) {
      ++exited;
      if (first_exited < 0) first_exited = t;
    }
    if (st == State::at_warp) {
      ++at_warp;
      if (first_warp < 0) first_warp = t;
    }
  }
  if (first_warp >= 0) {
    // Name the first waiting lane, its group and why the group cannot meet.
    const int wi = first_warp >> 5;
    const Warp& w = warps_[wi];
    const int lane = first_warp & 31;
    const Lane& x = w.lanes[lane];
    s << "in warp " << wi << ", lane " << lane << " waits in " << op_name(x.op) << " with mask "
      << hex_mask(x.requested_mask) << ", but";
    int reasons = 0;
    for (unsigned rest = x.mask; rest && reasons < 4; rest &= rest - 1) {
      const int l = __builtin_ctz(rest);
      const int other = wi * 32 + l;
      const State st = threads_[other].state;
      if (st == State::at_warp && w.lanes[l].mask == x.mask && w.lanes[l].op == x.op) continue;
      s << (reasons ? ";" : "") << " lane " << l;
      if (st == State::done) {
        s << " exited without reaching it";
      } else if (st == State::at_barrier) {
        s << " waits at __syncthreads()";
      } else if (st == State::at_warp) {
        s << " waits in " << op_name(w.lanes[l].op) << " with mask " << hex_mask(w.lanes[l].requested_mask);
      } else {
        s << " cannot reach it";
      }
      ++reasons;
    }
    s << ": every lane named in the mask must call the same warp operation with the same mask";
  } else if (at_barrier > 0) {
    s << "__syncthreads() is reached by " << at_barrier << " of " << n_ << " threads";
    if (exited > 0) s << "; " << exited << " exited without reaching it (first: " << thread_name(first_exited) << ")";
    s << ": a barrier must be reached by every thread of the block";
  } else {
    s << "no thread can run";
  }
  return s.str();
}

void Simulator::abandon_block() {
  cancelling_ = true;
  for (int t = 0; t < n_; ++t) {
    if (threads_[t].fiber != nullptr && threads_[t].state != State::done) resume(t);
  }
  ready_.clear();
  yielded_.clear();
  for (Warp& w : warps_) w.pending = w.activemask_waiters = 0;
  barrier_arrived_ = barrier_true_ = 0;
  cancelling_ = false;
}

void Simulator::run_block() {
  next_unstarted_ = 0;
  done_ = 0;
  lonely_spins_ = 0;
  barrier_arrived_ = barrier_true_ = 0;
  ready_.clear();
  yielded_.clear();
  error_ = nullptr;
  error_thread_ = -1;
  for (int t = 0; t < n_; ++t) threads_[t] = Thread{};
  for (size_t wi = 0; wi < warps_.size(); ++wi) {
    const int lanes = std::min(32, n_ - static_cast<int>(wi) * 32);
    warps_[wi].exists = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u);
    warps_[wi].pending = warps_[wi].activemask_waiters = 0;
  }
  // Dynamic shared memory starts as all-ones bytes (NaN floats, -1 ints) in every block, so a
  // kernel that reads it before writing it, or relies on an earlier block's data, shows it.
  if (shared_) std::memset(shared_, 0xff, shared_bytes_);

  for (;;) {
    int t;
    if (!ready_.empty()) {
      t = ready_.front();
      ready_.pop_front();
    } else if (next_unstarted_ < n_) {
      t = start_order(next_unstarted_++);
      Fiber* f;
      if (!free_.empty()) {
        f = free_.back();
        free_.pop_back();
      } else {
        f = new_fiber();
      }
      start_thread(t, f);
    } else if (!yielded_.empty()) {
      t = yielded_.front();
      yielded_.pop_front();
    } else if (resolve_activemask()) {
      continue;
    } else if (done_ == n_) {
      unsigned long long busiest = 0;
      for (const Thread& th : threads_) busiest = std::max(busiest, th.steps);
      steps_.span = std::max(steps_.span, busiest);
      steps_.work += busiest;
      ++steps_.blocks;
      return;
    } else {
      const std::string msg = describe_deadlock();
      abandon_block();
      throw std::runtime_error(msg);
    }
    resume(t);
    if (error_) {
      const std::exception_ptr err = error_;
      const int who = error_thread_;
      abandon_block();
      try {
        std::rethrow_exception(err);
      } catch (const std::exception& e) {
        // An exception from the kernel's own code (or a CPU helper it calls): say where.
        const std::string what = e.what();
        if (what.rfind("SIMT:", 0) == 0) throw;  // already names the kernel
        throw std::runtime_error(where() + ", " + thread_name(who) + ": " + what);
      }
    }
  }
}

void Simulator::run(const char* name, dim3 grid, dim3 block, size_t shared_bytes, void (*thunk)(void*),
                    void* ctx) {
  name_ = name;
  thunk_ = thunk;
  ctx_ = ctx;
  n_ = static_cast<int>(block.x * block.y * block.z);
  threads_.assign(n_, Thread{});
  warps_.assign((n_ + 31) / 32, Warp{});
  shared_bytes_ = shared_bytes;
  shared_ = nullptr;
  if (shared_bytes > 0) {
    void* p = nullptr;
    if (posix_memalign(&p, 128, shared_bytes) != 0) throw std::bad_alloc();
    shared_ = static_cast<unsigned char*>(p);
  }
  struct Reset {
    Simulator* s;
    ~Reset() {
      std::free(s->shared_);
      s->shared_ = nullptr;
      detail::tls = hulk::simt::ThreadContext{};
    }
  } reset{this};
  detail::tls.block_dim = block;
  detail::tls.grid_dim = grid;
  detail::tls.dynamic_shared = shared_;
  steps_ = LaunchSteps{};
  steps_.kernel = name;
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        detail::tls.block_idx = uint3{x, y, z};
        reverse_ = ((x + y + z) & 1u) != 0;
        run_block();
      }
    }
  }
  if (recording_) recorded_.push_back(steps_);
}

std::string dims(dim3 d) {
  std::ostringstream s;
  s << "(" << d.x << "," << d.y << "," << d.z << ")";
  return s.str();
}

}  // namespace

namespace detail {

// Barriers and warp operations exist only inside a running kernel.
Simulator& in_kernel(const char* what) {
  Simulator& sim = simulator();
  if (!sim.in_kernel()) {
    throw std::runtime_error(std::string("SIMT: ") + what + " called outside a kernel launched with hulk::cuda::launch");
  }
  return sim;
}

void syncthreads() {
  Simulator& sim = in_kernel("__syncthreads()");
  ++tls_steps;
  sim.syncthreads(BarrierOp::sync, 0, nullptr);
}

int syncthreads_reduce(BarrierOp op, int predicate) {
  int result = 0;
  ++tls_steps;
  in_kernel("__syncthreads_count/and/or").syncthreads(op, predicate != 0, &result);
  return result;
}

unsigned long long warp_op(WarpOp op, unsigned mask, unsigned long long payload, int arg, int width) {
  Simulator& sim = in_kernel(op_name(op));
  ++tls_steps;
  return sim.warp_op(op, mask, payload, arg, width);
}

unsigned activemask() { return in_kernel("__activemask()").activemask(); }

void yield() {
  Simulator& sim = simulator();
  if (sim.in_kernel()) sim.yield();
}

// nullptr when the launch asked for none (declaring the pointer is harmless, using it is not).
unsigned char* dynamic_shared() { return simulator().dynamic_shared(); }

void fail(const char* what) { simulator().fail(what); }

}  // namespace detail

void record_steps(bool on) {
  simulator().recording_ = on;
  if (!on) simulator().recorded_.clear();
}

std::vector<LaunchSteps> take_steps() {
  std::vector<LaunchSteps> out;
  out.swap(simulator().recorded_);
  return out;
}

void run_kernel(const char* name, const void* kernel, dim3 grid, dim3 block, size_t dynamic_shared_bytes,
                size_t max_dynamic_shared_bytes, cudaStream_t stream, void (*thunk)(void*), void* ctx) {
  const std::string who = std::string("SIMT: kernel '") + name + "'";
  // Streams are synchronous: work is done when issued. The handle must still be valid.
  if (!detail::stream_valid(stream)) {
    throw std::runtime_error(who + ": launched into a stream that was never created or is destroyed");
  }
  Simulator& sim = simulator();
  if (sim.in_kernel()) {
    throw std::runtime_error(who + " launched from inside a kernel: dynamic parallelism is not supported");
  }
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0) {
    throw std::runtime_error(who + ": grid " + dims(grid) + ", block " + dims(block) +
                             " has a zero dimension, which CUDA rejects (invalid configuration); skip the "
                             "launch when the input is empty");
  }
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (block.x > kMaxBlockXY || block.y > kMaxBlockXY || block.z > kMaxBlockZ || threads > kMaxThreadsPerBlock) {
    throw std::runtime_error(who + ": block " + dims(block) +
                             " exceeds the device limits (x, y <= 1024, z <= 64, x*y*z <= 1024 threads)");
  }
  if (grid.x > kMaxGridX || grid.y > kMaxGridYZ || grid.z > kMaxGridYZ) {
    throw std::runtime_error(who + ": grid " + dims(grid) +
                             " exceeds the device limits (x <= 2^31-1, y, z <= 65535)");
  }
  // The opt-in is global (hulk::cuda::set_max_dynamic_shared) or per kernel (cudaFuncSetAttribute).
  max_dynamic_shared_bytes = std::max(max_dynamic_shared_bytes, detail::func_max_dynamic_shared(kernel));
  if (dynamic_shared_bytes > max_dynamic_shared_bytes) {
    throw std::runtime_error(who + ": " + std::to_string(dynamic_shared_bytes) +
                             " bytes of dynamic shared memory exceed the limit of " +
                             std::to_string(max_dynamic_shared_bytes) +
                             " bytes (48 KiB unless raised with hulk::cuda::set_max_dynamic_shared, at most "
                             "227 KiB)");
  }
  sim.run(name, grid, block, dynamic_shared_bytes, thunk, ctx);
}

}  // namespace hulk::simt
