// MpiJob: what droce-coll asks of MPI (Open MPI's mpirun), kept behind this small interface so
// that nothing else includes <mpi.h>. MPI carries only bootstrap and results — never the data —
// and no MPI wait here is unbounded: MPI calls have no timeout, so every exchange is
// non-blocking sends and probes polled against a deadline, between polls of the rank's port.
//
// An exchange is a barrier that knows who is missing: every rank sends rank 0 its bytes, rank 0
// waits for all of them (naming the ranks that did not arrive when the deadline passes), decides,
// and answers every rank with one reply. Heartbeats flow to rank 0 in between, so that it can
// tell a rank whose process stopped (no word from it) from one that waits on another.
#pragma once

#include <droce/engine/core/status.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace droce::coll {

using Bytes = std::vector<std::uint8_t>;

class MpiJob {
 public:
  // MPI_Init; the world's size and this process's rank, and its rank among those on its host.
  [[nodiscard]] static std::unique_ptr<MpiJob> init(int* argc, char*** argv, engine::Status& err);
  ~MpiJob();  // sends still pending get a bounded wait, then MPI_Finalize
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  [[nodiscard]] std::uint32_t rank() const { return rank_; }
  [[nodiscard]] std::uint32_t size() const { return size_; }
  [[nodiscard]] std::uint32_t local_rank() const { return local_rank_; }
  [[nodiscard]] std::uint32_t local_size() const { return local_size_; }
  [[nodiscard]] const std::string& host() const { return host_; }

  // Rank 0, with every rank's bytes (by rank, its own included): ok and the reply every rank
  // gets, or an error that ends the job (its line printed, MPI_Abort).
  using Decide = std::function<engine::Status(const std::vector<Bytes>& all, Bytes& reply)>;
  // Rank 0, at its deadline, with the ranks that did not arrive: the line that names them.
  using Missing = std::function<std::string(const std::vector<std::uint32_t>& missing)>;
  // One exchange called `what`: `mine` to rank 0, `reply` back. Rank 0 waits `timeout_s` for the
  // arrivals; the others wait for the reply that long plus `grace_s` (rank 0 speaks first).
  // `poll` runs between probes (the rank's port keeps moving). kTimeout names who is missing.
  [[nodiscard]] engine::Status exchange(const char* what, const Bytes& mine, double timeout_s, double grace_s,
                                        const std::function<void()>& poll, const Decide& decide, const Missing& missing,
                                        Bytes& reply);

  // Not rank 0: `b` to rank 0 if the previous heartbeat has left (else dropped: the next carries news).
  void heartbeat(const Bytes& b);
  // Rank 0: every heartbeat that arrived, in order.
  void take_heartbeats(const std::function<void(std::uint32_t from, const Bytes& b)>& fn);

  // Ends every process of the job with `code` (mpirun's exit status).
  [[noreturn]] void abort(int code);

 private:
  MpiJob() = default;
  struct Pending;
  void reap_sends(bool wait_all);
  std::uint32_t rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string host_;
  std::uint32_t seq_ = 0;
  std::vector<std::unique_ptr<Pending>> sends_;
  std::unique_ptr<Pending> beat_;
};

}  // namespace droce::coll
