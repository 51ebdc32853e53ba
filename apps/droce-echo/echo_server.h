// droce-echo's server side: the echo service on one QP, the per-worker stage that polls an
// endpoint and serves its QPs, and the server's run (echo until the client ends, then the
// end-of-run lines).
#pragma once

#include <droce/engine/core/memory_region.h>
#include <droce/engine/core/port.h>
#include <droce/engine/endpoint/rc_endpoint.h>
#include <droce/engine/exchange/oob_exchange.h>
#include <droce/engine/lab/link_impairment.h>
#include <droce/engine/workers/worker_group.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/lab_impairments.h"
#include "apps/droce-echo/options.h"

namespace droce::echo {

struct Setup;

// The service: every received message goes back — with the same immediate data to a droce-echo
// client, as a plain SEND to ibv_rc_pingpong (whose client sends back each reply it receives, so
// every request after its first must equal our previous reply: a check of both directions). The
// reply is copied out of the view into registered memory (a view's frames are not registered).
class EchoServer {
 public:
  EchoServer(engine::RcEndpoint& ep, engine::MemoryRegistry& mem, std::uint32_t qpn, bool rc_pingpong);
  void serve();
  [[nodiscard]] std::uint64_t echoed() const { return echoed_; }
  [[nodiscard]] std::uint64_t errors() const { return errors_; }
  [[nodiscard]] std::uint64_t mismatched() const { return mismatched_; }
  [[nodiscard]] bool idle() const { return outstanding_ == 0; }
  [[nodiscard]] const std::string& first_error() const { return first_error_; }
  // The only errors are an unacknowledged tail: one reply's retries exhausted and every reply after
  // it, up to our newest, flushed with the QP (ibv_rc_pingpong, finished, acknowledges nothing more).
  [[nodiscard]] bool only_unacked_tail() const {
    return unacked_from_ != 0 && errors_ == 1 + flushed_ && unacked_from_ + flushed_ == next_;
  }
  [[nodiscard]] std::uint64_t unacked_tail() const { return unacked_from_ == 0 ? 0 : next_ - unacked_from_ + 1; }

 private:
  static constexpr std::uint32_t kSlots = 32;
  engine::RcEndpoint& ep_;
  std::uint32_t qpn_;
  bool rc_pingpong_;
  std::vector<std::uint8_t> buf_;
  rc::MemoryRegion mr_;
  const std::uint8_t* last_ = nullptr;  // our previous reply (its slot is reused only kSlots later)
  std::uint32_t last_len_ = 0;
  std::uint64_t next_ = 0, echoed_ = 0, errors_ = 0, mismatched_ = 0;
  std::uint32_t outstanding_ = 0;
  std::string first_error_;
  std::uint64_t unacked_from_ = 0;  // the reply whose retries ran out (its wr_id), 0: none
  std::uint64_t flushed_ = 0;       // replies flushed with the QP after it
};

// One worker's stage of the server: the engine worker it polls (or, in a loopback lab, an endpoint
// the lab polls) and the echo service of each of its QPs. Single-threaded; the main lcore reads
// only echoed() and idle() while it runs, relaxed atomics published here.
class EchoWorker {
 public:
  // The services run as the endpoint's application stage (RcEndpoint::set_app_stage): a reply
  // leaves in the same TX burst as the ACK of the request it answers.
  EchoWorker(engine::RcEndpoint& ep, engine::MemoryRegistry& mem, bool rc_pingpong, engine::Worker* worker = nullptr)
      : ep_(ep), mem_(mem), rc_pingpong_(rc_pingpong), worker_(worker) {
    ep_.set_app_stage([](void* self) { static_cast<EchoWorker*>(self)->serve(); }, this);
  }
  ~EchoWorker() { ep_.set_app_stage(nullptr, nullptr); }
  EchoWorker(const EchoWorker&) = delete;
  EchoWorker& operator=(const EchoWorker&) = delete;
  // Serves `qpn` (a QP of this worker's endpoint) from now on.
  void add_qp(std::uint32_t qpn) { services_.push_back(std::make_unique<EchoServer>(ep_, mem_, qpn, rc_pingpong_)); }
  // One iteration: the worker (its queue, steering, the endpoint, whose application stage runs
  // every QP's service).
  void poll(std::uint64_t now_tsc) {
    if (worker_ != nullptr)
      worker_->poll(now_tsc);
    else
      ep_.poll(now_tsc);
  }
  // The services alone (the endpoint's application stage).
  void serve();
  [[nodiscard]] engine::RcEndpoint& endpoint() { return ep_; }
  [[nodiscard]] const engine::Worker* worker() const { return worker_; }
  [[nodiscard]] const std::vector<std::unique_ptr<EchoServer>>& services() const { return services_; }
  [[nodiscard]] std::uint64_t echoed() const { return echoed_.load(std::memory_order_relaxed); }
  [[nodiscard]] bool idle() const { return idle_.load(std::memory_order_relaxed); }
  // Once the worker is stopped (or from its own lcore).
  [[nodiscard]] std::uint64_t errors() const;
  [[nodiscard]] std::uint64_t mismatched() const;

 private:
  engine::RcEndpoint& ep_;
  engine::MemoryRegistry& mem_;
  bool rc_pingpong_;
  engine::Worker* worker_;
  std::vector<std::unique_ptr<EchoServer>> services_;
  std::atomic<std::uint64_t> echoed_{0};
  std::atomic<bool> idle_{true};
};

// The server's workers: worker 0 on the main lcore (polled by the server's run beside the control
// connection), workers 1..N-1 each on its own EAL lcore until stop().
class EchoWorkers {
 public:
  explicit EchoWorkers(std::vector<std::unique_ptr<EchoWorker>> w) : w_(std::move(w)) {}
  ~EchoWorkers() { stop(); }
  EchoWorkers(const EchoWorkers&) = delete;
  EchoWorkers& operator=(const EchoWorkers&) = delete;

  [[nodiscard]] std::size_t size() const { return w_.size(); }
  [[nodiscard]] EchoWorker& worker(std::size_t w) { return *w_[w]; }
  [[nodiscard]] const EchoWorker& worker(std::size_t w) const { return *w_[w]; }
  // Workers 1..N-1 onto the worker lcores in EAL's order; only they touch their QPs from now on.
  [[nodiscard]] engine::Status launch();
  void poll(std::uint64_t now_tsc) { w_[0]->poll(now_tsc); }
  [[nodiscard]] std::uint64_t echoed() const;
  [[nodiscard]] bool idle() const;
  // The launched workers leave their loops (each ends its current iteration) and are joined.
  void stop();
  [[nodiscard]] std::uint64_t errors() const;
  [[nodiscard]] std::uint64_t mismatched() const;
  [[nodiscard]] const std::string& first_error() const;
  [[nodiscard]] unsigned lcore(std::size_t w) const;

 private:
  struct Launch {
    EchoWorker* worker;
    const std::atomic<bool>* quit;
  };
  std::vector<std::unique_ptr<EchoWorker>> w_;
  std::vector<Launch> launches_;
  std::vector<unsigned> lcores_;  // lcores_[w - 1]: worker w's
  std::atomic<bool> quit_{false};
};

// The server's run once its QPs are connected: echo until the client ends (END over the control
// connection, or its -n messages from ibv_rc_pingpong), a stall of --timeout or a stop; then the
// end-of-run lines, the port stopped, the report. Returns the exit status.
[[nodiscard]] int run_server(const Options& o, EchoWorkers& workers, engine::OobConnection& oob, engine::Port* port,
                             const apps::LabImpairments& impairments);

// The server once its QPs are connected (connect.h): an echo stage on each worker of st.group
// serving its QPs, workers 1..N-1 launched, run_server, then every worker stopped and the group
// finished. Returns the exit status.
[[nodiscard]] int run_server_workers(const Options& o, Setup& st);

}  // namespace droce::echo
