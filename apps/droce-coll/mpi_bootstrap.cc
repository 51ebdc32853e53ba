// MpiJob over Open MPI: point-to-point sends and probes only (MPI_Isend, MPI_Iprobe, then
// MPI_Recv of a message already there), so that every wait is a loop against a deadline and rank
// 0 knows exactly whose message has not come.
#include "apps/droce-coll/mpi_bootstrap.h"

// The C API only: Open MPI's deprecated C++ bindings (mpicxx.h) do not build warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace droce::coll {

namespace {

constexpr int kArrivalTag = 35001, kReplyTag = 35002, kHeartbeatTag = 35003;
// A payload starts with the exchange's number, so that a reply or arrival of another exchange
// is refused rather than taken.
constexpr std::size_t kSeqBytes = 4;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

Bytes with_seq(std::uint32_t seq, const Bytes& b) {
  Bytes out(kSeqBytes + b.size());
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::uint8_t>(seq >> (24 - 8 * i));
  std::copy(b.begin(), b.end(), out.begin() + kSeqBytes);
  return out;
}

std::uint32_t seq_of(const Bytes& b) {
  return std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 | std::uint32_t{b[2]} << 8 | b[3];
}

std::uint32_t env_u32(const char* name, std::uint32_t dflt) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == 0) return dflt;
  char* end = nullptr;
  const unsigned long x = std::strtoul(v, &end, 10);
  return *end == 0 ? static_cast<std::uint32_t>(x) : dflt;
}

// A message already announced by MPI_Iprobe: its bytes.
Bytes receive_probed(const MPI_Status& st, int tag) {
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  Bytes b(static_cast<std::size_t>(count < 0 ? 0 : count));
  MPI_Recv(b.data(), count, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return b;
}

}  // namespace

struct MpiJob::Pending {
  Bytes bytes;
  MPI_Request req = MPI_REQUEST_NULL;
  bool done() {
    if (req == MPI_REQUEST_NULL) return true;
    int flag = 0;
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    return flag != 0;
  }
};

std::unique_ptr<MpiJob> MpiJob::init(int* argc, char*** argv, engine::Status& err) {
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
    err = engine::Status::error(engine::StatusCode::kError, "MPI_Init failed");
    return nullptr;
  }
  // Errors come back as codes (a failed call names itself) instead of MPI's default abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::unique_ptr<MpiJob> j(new MpiJob());
  int r = 0, s = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  j->rank_ = static_cast<std::uint32_t>(r);
  j->size_ = static_cast<std::uint32_t>(s);
  // Open MPI says where this rank sits on its host; other launchers: one rank per host.
  j->local_rank_ = env_u32("OMPI_COMM_WORLD_LOCAL_RANK", 0);
  j->local_size_ = env_u32("OMPI_COMM_WORLD_LOCAL_SIZE", 1);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  j->host_.assign(name, static_cast<std::size_t>(len));
  j->beat_ = std::make_unique<Pending>();
  return j;
}

MpiJob::~MpiJob() {
  reap_sends(true);
  MPI_Finalize();
}

void MpiJob::reap_sends(bool wait_all) {
  // Bounded even at the end: a receiver that is gone never completes a send.
  const double deadline = now_s() + 5;
  do {
    std::erase_if(sends_, [](const std::unique_ptr<Pending>& p) { return p->done(); });
    if (!wait_all || (sends_.empty() && beat_->done())) return;
  } while (now_s() < deadline);
  for (auto& p : sends_)
    if (p->req != MPI_REQUEST_NULL) MPI_Cancel(&p->req);
  if (beat_->req != MPI_REQUEST_NULL) MPI_Cancel(&beat_->req);
}

engine::Status MpiJob::exchange(const char* what, const Bytes& mine, double timeout_s, double grace_s,
                                const std::function<void()>& poll, const Decide& decide, const Missing& missing,
                                Bytes& reply) {
  using engine::Status;
  using engine::StatusCode;
  const std::uint32_t seq = ++seq_;
  const double start = now_s();
  reap_sends(false);
  if (rank_ != 0) {
    auto p = std::make_unique<Pending>();
    p->bytes = with_seq(seq, mine);
    if (MPI_Isend(p->bytes.data(), static_cast<int>(p->bytes.size()), MPI_BYTE, 0, kArrivalTag, MPI_COMM_WORLD,
                  &p->req) != MPI_SUCCESS)
      return Status::error(StatusCode::kIo, std::string(what) + ": MPI_Isend to rank 0 failed");
    sends_.push_back(std::move(p));
    const double deadline = start + timeout_s + grace_s;
    for (;;) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(0, kReplyTag, MPI_COMM_WORLD, &flag, &st);
      if (flag != 0) {
        Bytes b = receive_probed(st, kReplyTag);
        if (b.size() < kSeqBytes || seq_of(b) != seq)
          return Status::error(StatusCode::kPeer, std::string(what) + ": rank 0 answered another exchange");
        reply.assign(b.begin() + kSeqBytes, b.end());
        return Status();
      }
      if (now_s() > deadline) {
        char line[200];
        std::snprintf(line, sizeof line,
                      "rank %u: no answer from rank 0 at '%s' within %.1f s (rank 0 names a rank that did not "
                      "arrive; without its line, rank 0 itself stopped)",
                      rank_, what, timeout_s + grace_s);
        return Status::error(StatusCode::kTimeout, line);
      }
      poll();
    }
  }
  // Rank 0: every rank's arrival, by rank.
  std::vector<Bytes> all(size_);
  std::vector<bool> arrived(size_, false);
  all[0] = mine;
  arrived[0] = true;
  std::uint32_t count = 1;
  const double deadline = start + timeout_s;
  while (count < size_) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kArrivalTag, MPI_COMM_WORLD, &flag, &st);
    if (flag != 0) {
      Bytes b = receive_probed(st, kArrivalTag);
      const auto from = static_cast<std::uint32_t>(st.MPI_SOURCE);
      if (b.size() < kSeqBytes || seq_of(b) != seq || arrived[from])
        return Status::error(StatusCode::kPeer, std::string(what) + ": rank " + std::to_string(from) +
                                                    " sent a message of another exchange");
      all[from].assign(b.begin() + kSeqBytes, b.end());
      arrived[from] = true;
      ++count;
      continue;
    }
    if (now_s() > deadline) {
      std::vector<std::uint32_t> late;
      for (std::uint32_t r = 0; r < size_; ++r)
        if (!arrived[r]) late.push_back(r);
      return Status::error(StatusCode::kTimeout, missing(late));
    }
    poll();
  }
  Bytes answer;
  if (Status s = decide(all, answer); !s.ok()) return s;
  for (std::uint32_t r = 1; r < size_; ++r) {
    auto p = std::make_unique<Pending>();
    p->bytes = with_seq(seq, answer);
    if (MPI_Isend(p->bytes.data(), static_cast<int>(p->bytes.size()), MPI_BYTE, static_cast<int>(r), kReplyTag,
                  MPI_COMM_WORLD, &p->req) != MPI_SUCCESS)
      return Status::error(StatusCode::kIo, std::string(what) + ": MPI_Isend to rank " + std::to_string(r) + " failed");
    sends_.push_back(std::move(p));
  }
  reply = std::move(answer);
  return Status();
}

void MpiJob::heartbeat(const Bytes& b) {
  if (rank_ == 0 || !beat_->done()) return;
  beat_->bytes = b;
  MPI_Isend(beat_->bytes.data(), static_cast<int>(beat_->bytes.size()), MPI_BYTE, 0, kHeartbeatTag, MPI_COMM_WORLD,
            &beat_->req);
}

void MpiJob::take_heartbeats(const std::function<void(std::uint32_t, const Bytes&)>& fn) {
  for (int k = 0; k < 256; ++k) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kHeartbeatTag, MPI_COMM_WORLD, &flag, &st);
    if (flag == 0) return;
    const Bytes b = receive_probed(st, kHeartbeatTag);
    fn(static_cast<std::uint32_t>(st.MPI_SOURCE), b);
  }
}

void MpiJob::abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace droce::coll
