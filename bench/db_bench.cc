// bench_db: the tuning database's lookup latency and commit throughput
// (database/, bench/README.md, "bench_db").
//
// 1. Builds a database of --records records (default 10^6) over --tasks
//    (workload, target) pairs (default 10^4: 2,500 workloads x 4 targets),
//    committed in batches of --build-batch records (default 1,000) with the
//    default durability (synchronous FULL): the build's records/s is the
//    first commit-throughput figure. Records are realistic: traces of 15-25
//    instructions (sample_perfect_tile + split, reorder, cache_write, fuse,
//    parallel, vectorize, ... with attrs and decisions; ~720 bytes, as
//    bench/traces/*.json), 3-5 repeat times, ~90% OK and the rest build and
//    run errors, timeouts and wrong results. The stream visits the tasks in
//    shuffled order, 50 records of a task at a time (one search round), one
//    job per pass over the tasks.
// 2. Commit throughput of further records into that database for batch
//    sizes 1, 10, 100, 1000 (--batches), durable (synchronous FULL) and not
//    (NORMAL); each configuration runs for about --sweep-seconds. Commits
//    report records per second of wall time and per CPU-second.
// 3. Closes the database and reopens it read-only (a fresh connection, as a
//    deployed lookup has), then times: the first Best (cold), --lookups Best
//    calls on random tasks with exact target matching, --other-lookups each
//    of Best with TargetMatching::kCompatible for a target no record was
//    measured on (the fallback walk) and for the task's own target, and
//    IsMeasured (the search's dedupe check; half hits). Every answer is
//    checked against what was committed. Each call's wall time
//    (steady_clock), CPU time, and whether it was preempted or read the
//    disk are recorded (Sampler), and a fixed computation as long as a
//    median Best is timed the same way: the machine's own noise.
//    --os-cache warm|evict reads the file into the OS page cache, or drops
//    it from there, before the lookups (default: as found, reported).
//
// Prints tables; --json FILE writes the figures as JSON too ("-": stdout).
// --keep keeps the database; --lookups-only times lookups in a kept one.
// Not a test: timings depend on the machine, its disk and its load.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "database/database.h"
#include "proto/record.pb.h"

namespace {

using lathe::db::Database;
using lathe::db::OpenOptions;
using lathe::db::TargetMatching;
using lathe::proto::Record;
using lathe::proto::TargetInfo;
using lathe::proto::Trace;
using lathe::proto::TraceInstruction;
using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "bench_db: %s\n", message.c_str());
  std::exit(1);
}

template <typename T>
T Check(absl::StatusOr<T> value, const char* what) {
  if (!value.ok()) Die(absl::StrCat(what, ": ", value.status().ToString()));
  return *std::move(value);
}

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}
double Micros(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

int64_t FileBytes(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 ? static_cast<int64_t>(info.st_size)
                                        : 0;
}

// The share of the file's pages in the OS page cache (-1: unknown). A
// lookup that misses SQLite's own cache reads its pages from there, or from
// the disk when they are not.
double Resident(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  const int64_t size = FileBytes(path);
  double share = -1;
  if (size > 0) {
    void* map =
        mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) {
      const long page = sysconf(_SC_PAGESIZE);
      const size_t pages = static_cast<size_t>((size + page - 1) / page);
      std::vector<unsigned char> in_core(pages);
      if (mincore(map, static_cast<size_t>(size), in_core.data()) == 0) {
        size_t resident = 0;
        for (unsigned char c : in_core) resident += c & 1;
        share = static_cast<double>(resident) / pages;
      }
      munmap(map, static_cast<size_t>(size));
    }
  }
  close(fd);
  return share;
}

std::string LoadAverage() {
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return "?";
  char buffer[128] = {};
  const bool read = std::fgets(buffer, sizeof buffer, f) != nullptr;
  std::fclose(f);
  if (!read) return "?";
  std::vector<std::string> fields = absl::StrSplit(buffer, ' ');
  if (fields.size() < 3) return "?";
  return absl::StrCat(fields[0], " ", fields[1], " ", fields[2]);
}

// A fixed computation: `rounds` dependent multiply-adds.
uint64_t Spin(int64_t rounds) {
  uint64_t x = 88172645463325252ull;
  for (int64_t i = 0; i < rounds; ++i)
    x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

std::string Fnv1a64Hex(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return absl::StrFormat("%016x", h);
}

// ---------------------------------------------------------------- records

struct Workload {
  std::string key;
  std::string canonical;
};

Workload MakeWorkload(int index) {
  std::string canonical;
  switch (index % 4) {
    case 0:
      canonical =
          absl::StrCat("matmul:K=", 64 * (1 + index % 32), ",M=", 32 + index,
                       ",N=", 64 * (1 + index / 32 % 32), ",dtype=float32");
      break;
    case 1:
      canonical = absl::StrCat(
          "conv2d_nchw:C=", 16 * (1 + index % 16), ",H=", 7 + index % 50,
          ",K=", 16 * (1 + index / 16 % 16), ",N=", 1 + index / 256,
          ",R=3,S=3,W=", 7 + index % 50, ",dtype=float32,pad=1,stride=1");
      break;
    case 2:
      canonical = absl::StrCat(
          "batch_matmul:B=", 1 + index % 16, ",K=", 64 + index,
          ",M=128,N=", 64 * (1 + index / 16 % 8), ",dtype=float32");
      break;
    default:
      canonical =
          absl::StrCat("softmax:axis=1,dtype=float32,shape=", 16 + index % 64,
                       "x", 128 + index);
      break;
  }
  return {Fnv1a64Hex(canonical), canonical};
}

std::vector<TargetInfo> MakeTargets(int count) {
  const std::vector<std::string> skylake = {
      "avx",      "avx2",   "avx512bw", "avx512cd", "avx512dq", "avx512f",
      "avx512vl", "bmi",    "bmi2",     "f16c",     "fma",      "lzcnt",
      "movbe",    "popcnt", "sse4.1",   "sse4.2"};
  std::vector<std::string> znver4 = skylake;
  for (const char* f :
       {"avx512bf16", "avx512bitalg", "avx512ifma", "avx512vbmi", "avx512vbmi2",
        "avx512vnni", "avx512vpopcntdq", "gfni", "sha", "vaes", "vpclmulqdq"}) {
    znver4.push_back(f);
  }
  std::sort(znver4.begin(), znver4.end());
  const std::vector<std::string> haswell = {
      "avx",   "avx2",  "bmi",    "bmi2",   "f16c",  "fma",
      "lzcnt", "movbe", "popcnt", "sse4.1", "sse4.2"};
  struct Cpu {
    const char* name;
    const std::vector<std::string>* features;
    const char* device;
  };
  const Cpu cpus[] = {
      {"znver4", &znver4, "AMD EPYC 9654, 2 cores, 8 GiB"},
      {"skylake-avx512", &skylake, "Intel Xeon Gold 6148, 20 cores, 192 GiB"},
      {"haswell", &haswell, "Intel Xeon E5-2680 v3, 12 cores, 64 GiB"}};
  std::vector<TargetInfo> targets;
  for (int i = 0; i < count; ++i) {
    // znver4 at 1 and 2 threads, skylake at 2, haswell at 2, then more
    // thread counts.
    const Cpu& cpu = i == 0 ? cpus[0] : cpus[(i - 1) % 3];
    const int threads = i == 0 ? 1 : 2 << ((i - 1) / 3);
    TargetInfo& t = targets.emplace_back();
    t.set_kind("llvm");
    t.set_cpu(cpu.name);
    for (const std::string& f : *cpu.features) t.add_features(f);
    std::vector<std::string> attrs;
    for (const std::string& f : *cpu.features) attrs.push_back("+" + f);
    t.set_canonical(absl::StrCat("llvm -mcpu=", cpu.name,
                                 " -mattr=", absl::StrJoin(attrs, ","),
                                 " -num-threads=", threads));
    t.set_num_threads(threads);
    t.set_device(cpu.device);
  }
  return targets;
}

class Generator {
 public:
  Generator(int tasks, int num_targets, uint64_t seed)
      : rng_(seed), targets_(MakeTargets(num_targets)) {
    const int workloads = (tasks + num_targets - 1) / num_targets;
    for (int i = 0; i < workloads; ++i) workloads_.push_back(MakeWorkload(i));
    tasks_ = tasks;
    best_.assign(tasks, std::numeric_limits<double>::infinity());
    a_hash_.resize(tasks);
    order_.resize(tasks);
    for (int i = 0; i < tasks; ++i) order_[i] = i;
    std::shuffle(order_.begin(), order_.end(), rng_);
    pool_.resize(kPool);
    for (Pooled& p : pool_) {
      MakeTrace("", p.trace);
      p.bytes = static_cast<int64_t>(p.trace.ByteSizeLong());
    }
  }

  int tasks() const { return tasks_; }
  const Workload& workload_of(int task) const {
    return workloads_[task / num_targets()];
  }
  const TargetInfo& target_of(int task) const {
    return targets_[task % num_targets()];
  }
  int num_targets() const { return static_cast<int>(targets_.size()); }
  // The fastest OK median committed so far (infinity: none).
  double best(int task) const { return best_[task]; }
  // A structural hash committed for the task (empty: none yet).
  const std::string& a_hash(int task) const { return a_hash_[task]; }
  std::mt19937_64& rng() { return rng_; }
  int64_t trace_bytes() const { return trace_bytes_; }
  int64_t generated() const { return generated_; }

  // The next record of the stream into `r` (cleared first: reusing records
  // keeps their allocations). Call Committed() once it is stored.
  void Next(Record& r) {
    if (in_chunk_ == kChunk) {
      in_chunk_ = 0;
      if (++position_ == tasks_) {
        position_ = 0;
        ++pass_;
      }
    }
    ++in_chunk_;
    const int task = order_[position_];
    // Record::Clear() deletes the sub-messages; kept, they keep their
    // allocations for the copies below.
    Trace* kept_trace = r.release_trace();
    TargetInfo* kept_target = r.release_target();
    r.Clear();
    if (kept_trace) r.set_allocated_trace(kept_trace);
    if (kept_target) r.set_allocated_target(kept_target);
    const Workload& w = workload_of(task);
    r.set_workload_key(w.key);
    r.set_workload(w.canonical);
    *r.mutable_target() = target_of(task);
    // A trace from the pool (building one per record costs more than
    // committing it); the records still differ in hash, times and the rest.
    const Pooled& pooled = pool_[rng_() % pool_.size()];
    Trace& trace = *r.mutable_trace();
    trace.CopyFrom(pooled.trace);
    trace.set_workload(w.key);
    trace_bytes_ += pooled.bytes + static_cast<int64_t>(w.key.size());
    instructions_ += pooled.trace.instructions_size();
    r.set_structural_hash(absl::StrFormat("%016x", rng_()));
    const double base = 1e-5 * (1 + task % 1000);  // 10 µs .. 10 ms
    std::uniform_real_distribution<double> slowdown(1.0, 8.0);
    std::uniform_real_distribution<double> noise(0.97, 1.05);
    const int roll = static_cast<int>(rng_() % 100);
    const lathe::proto::MeasureStatus status =
        roll < 90   ? lathe::proto::MEASURE_OK
        : roll < 95 ? lathe::proto::MEASURE_BUILD_ERROR
        : roll < 98 ? lathe::proto::MEASURE_RUN_ERROR
        : roll < 99 ? lathe::proto::MEASURE_TIMEOUT
                    : lathe::proto::MEASURE_WRONG_RESULT;
    r.set_status(status);
    if (status == lathe::proto::MEASURE_OK ||
        status == lathe::proto::MEASURE_WRONG_RESULT) {
      const double t = base * slowdown(rng_);
      const int repeats = 3 + static_cast<int>(rng_() % 3);
      std::vector<double> times;
      for (int i = 0; i < repeats; ++i) {
        times.push_back(t * noise(rng_));
        r.add_times_s(times.back());
      }
      std::sort(times.begin(), times.end());
      const size_t n = times.size();
      const double median =
          n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
      r.set_median_s(median);
      auto rank = [&](double q) {
        return times[static_cast<size_t>(std::lround(q * (n - 1)))];
      };
      r.set_spread((rank(0.9) - rank(0.1)) / median);
      if (status == lathe::proto::MEASURE_WRONG_RESULT) {
        r.set_error(
            "output differs from the reference: max abs error 0.0312 at C[17, "
            "3]");
      }
    } else if (status == lathe::proto::MEASURE_BUILD_ERROR) {
      r.set_error(
          "replaying the trace: instruction 7 (split): the factors' product 96 "
          "does not "
          "divide the loop's extent 1000");
    } else if (status == lathe::proto::MEASURE_RUN_ERROR) {
      r.set_error("the kernel crashed: signal 11 (SIGSEGV)");
    } else {
      r.set_error("exceeded the 10 s timeout");
    }
    r.set_runner("local:bench-host");
    r.set_lathe_version("0.1.0");
    r.set_measured_at_unix_ms(1700000000000 + generated_ * 37);
    r.set_job(absl::StrCat("bench-job-", pass_));
    pending_.push_back(task);
    ++generated_;
  }

  // Updates what lookups should answer with a record now stored.
  void Committed(const Record& r, int task) {
    if (r.status() == lathe::proto::MEASURE_OK)
      best_[task] = std::min(best_[task], r.median_s());
    if (a_hash_[task].empty()) a_hash_[task] = r.structural_hash();
  }

  // A batch of `n` records and their tasks.
  void NextBatch(int n, std::vector<Record>& batch, std::vector<int>& tasks) {
    batch.resize(n);
    tasks.clear();
    for (int i = 0; i < n; ++i) Next(batch[i]);
    tasks.swap(pending_);
    pending_.clear();
  }

 private:
  static constexpr int kChunk = 50;
  static constexpr int kPool = 4096;
  struct Pooled {
    Trace trace;  // workload left empty
    int64_t bytes = 0;
  };

  lathe::proto::TraceInput* Rv(TraceInstruction& ins, int rv) {
    lathe::proto::TraceInput* in = ins.add_inputs();
    in->set_rv(rv);
    return in;
  }
  TraceInstruction& Add(Trace& trace, const char* kind,
                        std::initializer_list<int> inputs, int outputs,
                        int& next_rv) {
    TraceInstruction& ins = *trace.add_instructions();
    ins.set_kind(kind);
    for (int rv : inputs) Rv(ins, rv);
    for (int i = 0; i < outputs; ++i) ins.add_outputs(next_rv++);
    return ins;
  }
  static void IntAttr(TraceInstruction& ins, const char* name, int64_t value) {
    lathe::proto::TraceAttr& a = *ins.add_attrs();
    a.set_name(name);
    a.set_int_value(value);
  }
  static void StringAttr(TraceInstruction& ins, const char* name,
                         const char* value) {
    lathe::proto::TraceAttr& a = *ins.add_attrs();
    a.set_name(name);
    a.set_string_value(value);
  }
  // A perfect tiling of `extent` into n factors, innermost <= 64.
  std::vector<int64_t> Tile(int64_t extent, int n) {
    std::vector<int64_t> factors(n, 1);
    int64_t rest = extent;
    for (int i = n - 1; i > 0; --i) {
      std::vector<int64_t> divisors;
      for (int64_t d = 1; d <= rest && d <= 64; ++d) {
        if (rest % d == 0) divisors.push_back(d);
      }
      factors[i] = divisors[rng_() % divisors.size()];
      rest /= factors[i];
    }
    factors[0] = rest;
    return factors;
  }
  // sample_perfect_tile of `loop` into n factors, then a split by them.
  std::vector<int> TileAndSplit(Trace& trace, int loop, int64_t extent, int n,
                                int& next_rv) {
    TraceInstruction& sample =
        Add(trace, "sample_perfect_tile", {loop}, n, next_rv);
    IntAttr(sample, "n", n);
    IntAttr(sample, "max_innermost", 64);
    lathe::proto::TraceDecision& decision = *trace.add_decisions();
    decision.set_instruction(trace.instructions_size() - 1);
    for (int64_t f : Tile(extent, n)) decision.add_values(f);
    TraceInstruction& split = *trace.add_instructions();
    split.set_kind("split");
    Rv(split, loop);
    for (int out : sample.outputs()) Rv(split, out);
    std::vector<int> loops;
    for (int i = 0; i < n; ++i) {
      split.add_outputs(next_rv);
      loops.push_back(next_rv++);
    }
    return loops;
  }

  // A matmul-like schedule of 15-25 instructions.
  void MakeTrace(const std::string& workload_key, Trace& trace) {
    trace.set_format_version(1);
    trace.set_workload(workload_key);
    int rv = 0;
    TraceInstruction& block = Add(trace, "get_block", {}, 1, rv);
    StringAttr(block, "name", "C");
    Add(trace, "get_loops", {0}, 3, rv);  // 1 2 3
    const std::vector<int> i = TileAndSplit(trace, 1, 1024, 4, rv);
    const std::vector<int> j = TileAndSplit(trace, 2, 1024, 4, rv);
    const std::vector<int> k = TileAndSplit(trace, 3, 1024, 2, rv);
    TraceInstruction& reorder = *trace.add_instructions();
    reorder.set_kind("reorder");
    for (int loop :
         {i[0], j[0], i[1], j[1], k[0], i[2], j[2], k[1], i[3], j[3]}) {
      Rv(reorder, loop);
    }
    if (rng_() % 2) {
      TraceInstruction& cw = Add(trace, "cache_write", {0}, 1, rv);
      IntAttr(cw, "write_index", 0);
      StringAttr(cw, "scope", "local");
      IntAttr(Add(trace, "reverse_compute_at", {cw.outputs(0), j[1]}, 0, rv),
              "preserve_unit_loops", 0);
    }
    const int fused = Add(trace, "fuse", {i[0], j[0]}, 1, rv).outputs(0);
    Add(trace, "parallel", {fused}, 0, rv);
    if (rng_() % 2) {
      TraceInstruction& unroll = Add(trace, "sample_categorical", {}, 1, rv);
      lathe::proto::TraceAttr& candidates = *unroll.add_attrs();
      candidates.set_name("candidates");
      for (int64_t c : {0, 16, 64, 512})
        candidates.mutable_ints()->add_values(c);
      lathe::proto::TraceAttr& probs = *unroll.add_attrs();
      probs.set_name("probs");
      for (int c = 0; c < 4; ++c) probs.mutable_floats()->add_values(0.25);
      lathe::proto::TraceDecision& decision = *trace.add_decisions();
      decision.set_instruction(trace.instructions_size() - 1);
      decision.add_values(static_cast<int64_t>(rng_() % 4));
      TraceInstruction& annotate = Add(trace, "annotate_loop", {fused}, 0, rv);
      StringAttr(annotate, "key", "pragma_auto_unroll_max_step");
      IntAttr(annotate, "value", 64);
    }
    Add(trace, "unroll", {i[3]}, 0, rv);
    Add(trace, "vectorize", {j[3]}, 0, rv);
    if (rng_() % 2) {
      const int init =
          Add(trace, "decompose_reduction", {0, k[0]}, 1, rv).outputs(0);
      const TraceInstruction& loops = Add(trace, "get_loops", {init}, 6, rv);
      Add(trace, "vectorize", {loops.outputs(5)}, 0, rv);
    }
    if (rng_() % 2) {
      TraceInstruction& cr = Add(trace, "cache_read", {0}, 1, rv);
      IntAttr(cr, "read_index", 1);
      StringAttr(cr, "scope", "global");
      lathe::proto::TraceAttr& splits = *cr.add_attrs();
      splits.set_name("layout_splits");
      splits.mutable_ints()->add_values(1);
      splits.mutable_ints()->add_values(32);
      IntAttr(Add(trace, "compute_at", {cr.outputs(0), j[0]}, 0, rv),
              "preserve_unit_loops", 1);
    }
  }

 public:
  int64_t instructions() const { return instructions_; }

 private:
  std::mt19937_64 rng_;
  std::vector<TargetInfo> targets_;
  std::vector<Workload> workloads_;
  int tasks_ = 0;
  std::vector<double> best_;
  std::vector<std::string> a_hash_;
  std::vector<int> order_;
  std::vector<Pooled> pool_;
  std::vector<int> pending_;
  int position_ = 0;
  int in_chunk_ = 0;
  int pass_ = 0;
  int64_t generated_ = 0;
  int64_t trace_bytes_ = 0;
  int64_t instructions_ = 0;
};

// ---------------------------------------------------------------- figures

struct Latency {
  std::string name;
  int64_t calls = 0;
  double mean_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, max_us = 0;
};

Latency Summarize(const std::string& name, std::vector<double> us) {
  Latency l;
  l.name = name;
  l.calls = static_cast<int64_t>(us.size());
  if (us.empty()) return l;
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double u : us) sum += u;
  l.mean_us = sum / us.size();
  // Nearest rank.
  auto at = [&](double q) {
    size_t rank = static_cast<size_t>(std::ceil(q * us.size()));
    return us[std::min(us.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  l.p50_us = at(0.50);
  l.p90_us = at(0.90);
  l.p99_us = at(0.99);
  l.max_us = us.back();
  return l;
}

// Times calls three ways: wall time (steady_clock, what a caller waits),
// the thread's CPU time (what the call itself costs), and whether the thread
// was preempted during the call (an involuntary context switch: on a shared
// machine, the wait for the CPU lands in the wall time's tail) or read from
// the disk (block input: a page neither SQLite's cache nor the OS page cache
// held).
class Sampler {
 public:
  explicit Sampler(int64_t reserve) {
    wall_.reserve(reserve);
    cpu_.reserve(reserve);
    preempted_.reserve(reserve);
    disk_.reserve(reserve);
  }
  void Start() {
    getrusage(RUSAGE_THREAD, &usage_);
    cpu_start_ = ThreadCpuUs();
    start_ = Clock::now();
  }
  void Stop() {
    const Clock::time_point end = Clock::now();
    const double cpu = ThreadCpuUs() - cpu_start_;
    rusage usage;
    getrusage(RUSAGE_THREAD, &usage);
    wall_.push_back(Micros(end - start_));
    cpu_.push_back(cpu);
    preempted_.push_back(usage.ru_nivcsw != usage_.ru_nivcsw);
    disk_.push_back(usage.ru_inblock != usage_.ru_inblock);
  }

  struct Figure {
    std::string name;
    Latency wall;   // every call
    Latency clean;  // the calls neither preempted nor reading the disk
    Latency cpu;
    int64_t preempted = 0;
    int64_t disk = 0;
  };
  Figure Summary(const std::string& name) const {
    Figure f;
    f.name = name;
    std::vector<double> kept;
    for (size_t i = 0; i < wall_.size(); ++i) {
      f.preempted += preempted_[i];
      f.disk += disk_[i];
      if (!preempted_[i] && !disk_[i]) kept.push_back(wall_[i]);
    }
    f.wall = Summarize(name, wall_);
    f.clean = Summarize(name, std::move(kept));
    f.cpu = Summarize(name, cpu_);
    return f;
  }

 private:
  static double ThreadCpuUs() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
  }
  std::vector<double> wall_, cpu_;
  std::vector<bool> preempted_, disk_;
  rusage usage_{};
  double cpu_start_ = 0;
  Clock::time_point start_;
};

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct CommitFigure {
  std::string name;
  bool durable = true;
  int batch = 0;
  int64_t records = 0;
  int64_t commits = 0;
  double seconds = 0;
  double records_per_s = 0;
  double cpu_seconds = 0;       // of this process, during the commit calls
  double generate_seconds = 0;  // making the records (not timed)
  Latency per_commit;
};

struct Options {
  int64_t records = 1000000;
  int tasks = 10000;
  int targets = 4;
  std::string db;
  bool keep = false;
  bool lookups_only = false;
  int64_t lookups = 100000;
  int64_t other_lookups = -1;  // -1: lookups / 5
  enum class OsCache { kAsFound, kWarm, kEvict } os_cache = OsCache::kAsFound;
  int build_batch = 1000;
  std::vector<int> batches = {1, 10, 100, 1000};
  double sweep_seconds = 2.0;
  uint64_t seed = 1;
  std::string json;
};

Options ParseFlags(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(flag + " needs a value");
      return argv[++i];
    };
    auto integer = [&]() -> int64_t {
      const std::string v = value();
      int64_t n;
      if (!absl::SimpleAtoi(v, &n) || n < 0)
        Die(absl::StrCat(flag, ": not a count: ", v));
      return n;
    };
    if (flag == "--records") {
      o.records = integer();
    } else if (flag == "--tasks") {
      o.tasks = static_cast<int>(integer());
    } else if (flag == "--targets") {
      o.targets = static_cast<int>(integer());
    } else if (flag == "--db") {
      o.db = value();
    } else if (flag == "--keep") {
      o.keep = true;
    } else if (flag == "--lookups-only") {
      o.lookups_only = true;
    } else if (flag == "--lookups") {
      o.lookups = integer();
    } else if (flag == "--other-lookups") {
      o.other_lookups = integer();
    } else if (flag == "--os-cache") {
      const std::string v = value();
      if (v == "as-found") {
        o.os_cache = Options::OsCache::kAsFound;
      } else if (v == "warm") {
        o.os_cache = Options::OsCache::kWarm;
      } else if (v == "evict") {
        o.os_cache = Options::OsCache::kEvict;
      } else {
        Die("--os-cache: as-found, warm or evict, not " + v);
      }
    } else if (flag == "--build-batch") {
      o.build_batch = static_cast<int>(integer());
    } else if (flag == "--batches") {
      o.batches.clear();
      for (absl::string_view b :
           absl::StrSplit(value(), ',', absl::SkipEmpty())) {
        int n;
        if (!absl::SimpleAtoi(b, &n) || n <= 0)
          Die(absl::StrCat("--batches: bad size ", b));
        o.batches.push_back(n);
      }
    } else if (flag == "--sweep-seconds") {
      const std::string v = value();
      if (!absl::SimpleAtod(v, &o.sweep_seconds))
        Die("--sweep-seconds: not a number: " + v);
    } else if (flag == "--seed") {
      o.seed = static_cast<uint64_t>(integer());
    } else if (flag == "--json") {
      o.json = value();
    } else if (flag == "--help" || flag == "-h") {
      std::printf(
          "bench_db [--records N (1000000)] [--tasks T (10000)] [--targets K "
          "(4)] [--db PATH]\n"
          "         [--keep] [--lookups N (100000)] [--other-lookups N "
          "(lookups/5)]\n"
          "         [--os-cache as-found|warm|evict] [--build-batch N (1000)]\n"
          "         [--batches 1,10,100,1000] [--sweep-seconds S (2)] [--seed "
          "N] [--json FILE|-]\n"
          "         [--lookups-only: time lookups in the database --db names, "
          "built by an\n"
          "          earlier --keep run with the same --tasks, --targets and "
          "--seed]\n");
      std::exit(0);
    } else {
      Die("unknown flag " + flag + " (--help)");
    }
  }
  if (o.tasks < 1 || o.targets < 1 || o.build_batch < 1)
    Die("tasks, targets, batch must be >= 1");
  if (o.tasks % o.targets != 0) Die("--tasks must be a multiple of --targets");
  if (o.lookups_only && o.db.empty()) Die("--lookups-only needs --db");
  if (o.lookups < 1) Die("--lookups must be >= 1");
  if (o.other_lookups < 0)
    o.other_lookups = std::max<int64_t>(1, o.lookups / 5);
  return o;
}

std::unique_ptr<Database> OpenDb(const std::string& path,
                                 OpenOptions::Mode mode, bool durable) {
  OpenOptions options;
  options.mode = mode;
  options.durable = durable;
  return Check(Database::Open(path, options), "opening the database");
}

// Commits `batch`, checks nothing was a duplicate, updates the expected
// answers; returns the commit's duration.
Clock::duration CommitBatch(Database& db, Generator& gen,
                            const std::vector<Record>& batch,
                            const std::vector<int>& tasks,
                            double& cpu_seconds) {
  const double cpu_start = ProcessCpuSeconds();
  const Clock::time_point start = Clock::now();
  lathe::db::CommitResult result = Check(db.Commit(batch), "commit");
  const Clock::duration took = Clock::now() - start;
  cpu_seconds += ProcessCpuSeconds() - cpu_start;
  if (result.added != static_cast<int64_t>(batch.size())) {
    Die(absl::StrCat("commit added ", result.added, " of ", batch.size(),
                     " records"));
  }
  for (size_t i = 0; i < batch.size(); ++i) gen.Committed(batch[i], tasks[i]);
  return took;
}

CommitFigure CommitRun(Database& db, Generator& gen, const std::string& name,
                       bool durable, int batch_size, int64_t max_records,
                       double max_seconds) {
  CommitFigure f;
  f.name = name;
  f.durable = durable;
  f.batch = batch_size;
  std::vector<double> per_commit_us;
  std::vector<Record> batch;
  std::vector<int> tasks;
  Clock::duration total{};
  const Clock::time_point wall_start = Clock::now();
  int64_t next_report = 100000;
  while (f.records < max_records) {
    const int n = static_cast<int>(
        std::min<int64_t>(batch_size, max_records - f.records));
    const Clock::time_point generate_start = Clock::now();
    gen.NextBatch(n, batch, tasks);
    f.generate_seconds += Seconds(Clock::now() - generate_start);
    const Clock::duration took =
        CommitBatch(db, gen, batch, tasks, f.cpu_seconds);
    total += took;
    per_commit_us.push_back(Micros(took));
    f.records += n;
    ++f.commits;
    if (max_records >= 200000 && f.records >= next_report) {
      std::fprintf(stderr, "  %" PRId64 " records, %.0f records/s so far\n",
                   f.records, f.records / Seconds(total));
      next_report += 100000;
    }
    if (f.commits >= 3 && Seconds(Clock::now() - wall_start) >= max_seconds)
      break;
  }
  f.seconds = Seconds(total);
  f.records_per_s = f.records / f.seconds;
  f.per_commit = Summarize(name, std::move(per_commit_us));
  return f;
}

std::string Human(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30))
    return absl::StrFormat("%.2f GiB", bytes / double(1 << 30));
  if (bytes >= (int64_t{1} << 20))
    return absl::StrFormat("%.1f MiB", bytes / double(1 << 20));
  return absl::StrFormat("%.1f KiB", bytes / 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseFlags(argc, argv);
  if (o.db.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    o.db = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/lathe_bench_db_",
                        getpid(), ".db");
  }
  for (const char* suffix : {"", "-wal", "-shm"}) {
    if (!o.lookups_only && access((o.db + suffix).c_str(), F_OK) == 0) {
      Die(o.db + suffix + " exists; give --db a new path");
    }
  }

  Generator gen(o.tasks, o.targets, o.seed);
  const std::string load_at_start = LoadAverage();
  std::printf("bench_db: %" PRId64
              " records over %d tasks (%d workloads x %d targets), db %s\n",
              o.records, o.tasks, o.tasks / o.targets, o.targets, o.db.c_str());
  std::fflush(stdout);

  // 1. The build.
  std::vector<CommitFigure> commits;
  int64_t build_file_bytes = 0;
  if (!o.lookups_only) {
    std::unique_ptr<Database> db =
        OpenDb(o.db, OpenOptions::Mode::kCreate, /*durable=*/true);
    std::fprintf(stderr,
                 "building: %" PRId64 " records in batches of %d (durable)\n",
                 o.records, o.build_batch);
    commits.push_back(CommitRun(*db, gen, "build", true, o.build_batch,
                                o.records,
                                std::numeric_limits<double>::infinity()));
    build_file_bytes = FileBytes(o.db) + FileBytes(o.db + "-wal");
  }
  const int64_t trace_bytes = gen.trace_bytes();
  const int64_t built = gen.generated();
  const double mean_instructions =
      built ? static_cast<double>(gen.instructions()) / built : 0.0;

  // 2. Commit throughput by batch size and durability, into the big database.
  for (bool durable : {true, false}) {
    if (o.lookups_only) break;
    std::unique_ptr<Database> db =
        OpenDb(o.db, OpenOptions::Mode::kReadWrite, durable);
    for (int batch : o.batches) {
      std::fprintf(stderr, "commit sweep: batch %d, %s\n", batch,
                   durable ? "durable" : "not durable");
      commits.push_back(CommitRun(*db, gen, "sweep", durable, batch,
                                  std::max<int64_t>(int64_t{batch} * 3, 50000),
                                  o.sweep_seconds));
    }
  }
  const int64_t total_records = gen.generated();
  const int64_t file_bytes = FileBytes(o.db) + FileBytes(o.db + "-wal");

  // 3. Lookups in a fresh connection.
  const double resident_found = Resident(o.db);
  if (o.os_cache != Options::OsCache::kAsFound) {
    const int fd = open(o.db.c_str(), O_RDONLY);
    if (fd < 0) Die("cannot open " + o.db);
    if (o.os_cache == Options::OsCache::kEvict) {
      // Clean pages only: the file was closed, so every page is written.
      fdatasync(fd);
      posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    } else {
      std::vector<char> buffer(1 << 20);
      while (read(fd, buffer.data(), buffer.size()) > 0) {
      }
    }
    close(fd);
  }
  const double resident = Resident(o.db);
  const std::string load_before_lookups = LoadAverage();
  std::unique_ptr<Database> db =
      OpenDb(o.db, OpenOptions::Mode::kReadOnly, true);
  std::mt19937_64& rng = gen.rng();
  // Checks a Best answer for the task's own target against the fastest OK
  // median committed for it; with compatible matching a task without one
  // may be answered from another target.
  auto check_best = [&](int task, const std::optional<lathe::db::Match>& match,
                        bool compatible) {
    const double expected = gen.best(task);
    if (o.lookups_only) {
      // The answers of an earlier run are unknown; every task has OK records.
      if (!match) Die(absl::StrCat("task ", task, ": no best record"));
      return;
    }
    if (std::isinf(expected)) {
      if (match && (!compatible || match->exact)) {
        Die(absl::StrCat("task ", task, ": a best where none is OK"));
      }
      return;
    }
    if (!match || !match->exact || match->record.median_s() != expected) {
      Die(absl::StrCat("task ", task, ": best median ",
                       match ? match->record.median_s() : 0.0, ", expected ",
                       expected));
    }
  };

  const int first_task = static_cast<int>(rng() % gen.tasks());
  const Clock::time_point start = Clock::now();
  std::optional<lathe::db::Match> first = Check(
      db->Best(gen.workload_of(first_task).key, gen.target_of(first_task)),
      "best");
  const double cold_us = Micros(Clock::now() - start);
  check_best(first_task, first, false);

  std::vector<Sampler::Figure> lookups;
  {
    Sampler sampler(o.lookups);
    for (int64_t i = 0; i < o.lookups; ++i) {
      const int task = static_cast<int>(rng() % gen.tasks());
      const std::string& key = gen.workload_of(task).key;
      const TargetInfo& target = gen.target_of(task);
      sampler.Start();
      std::optional<lathe::db::Match> best =
          Check(db->Best(key, target), "best");
      sampler.Stop();
      check_best(task, best, false);
    }
    lookups.push_back(sampler.Summary("Best, exact target"));
  }
  {
    // A target no record was measured on: the first target's CPU and
    // features at 64 threads; every stored target is compatible.
    TargetInfo asked = gen.target_of(0);
    asked.set_num_threads(64);
    asked.set_canonical(absl::StrCat(asked.canonical(), "-unmeasured-64"));
    Sampler sampler(o.other_lookups);
    for (int64_t i = 0; i < o.other_lookups; ++i) {
      const int task = static_cast<int>(rng() % gen.tasks());
      const std::string& key = gen.workload_of(task).key;
      sampler.Start();
      std::optional<lathe::db::Match> best =
          Check(db->Best(key, asked, TargetMatching::kCompatible),
                "best (compatible)");
      sampler.Stop();
      // Answered by the workload's fastest program on any stored target when
      // it has one (as built, every workload has records on every target).
      bool any_ok = o.lookups_only;
      for (int t = 0; t < gen.num_targets(); ++t) {
        any_ok |= !std::isinf(
            gen.best(task / gen.num_targets() * gen.num_targets() + t));
      }
      if (best.has_value() != any_ok || (best && best->exact)) {
        Die(absl::StrCat("compatible lookup of task ", task, ": ",
                         best ? "an unexpected answer" : "no answer"));
      }
    }
    lookups.push_back(sampler.Summary("Best, compatible, unmeasured target"));
  }
  {
    Sampler sampler(o.other_lookups);
    for (int64_t i = 0; i < o.other_lookups; ++i) {
      const int task = static_cast<int>(rng() % gen.tasks());
      const std::string& key = gen.workload_of(task).key;
      const TargetInfo& target = gen.target_of(task);
      sampler.Start();
      std::optional<lathe::db::Match> best =
          Check(db->Best(key, target, TargetMatching::kCompatible),
                "best (compatible)");
      sampler.Stop();
      check_best(task, best, true);
    }
    lookups.push_back(sampler.Summary("Best, compatible, measured target"));
  }
  {
    Sampler sampler(o.other_lookups);
    for (int64_t i = 0; i < o.other_lookups; ++i) {
      const int task = static_cast<int>(rng() % gen.tasks());
      const bool hit =
          i % 2 == 0 && !gen.a_hash(task).empty() && !o.lookups_only;
      const std::string hash =
          hit ? gen.a_hash(task) : absl::StrFormat("%016x", rng());
      const std::string& key = gen.workload_of(task).key;
      const std::string& target = gen.target_of(task).canonical();
      sampler.Start();
      const bool measured =
          Check(db->IsMeasured(key, target, hash), "is measured");
      sampler.Stop();
      if (measured != hit)
        Die(absl::StrCat("IsMeasured answered ", measured, " for task ", task));
    }
    lookups.push_back(sampler.Summary("IsMeasured, half hits"));
  }
  {
    // The machine's own noise: a fixed computation as long as a median Best,
    // timed the same way. Its tail is what the machine adds to any call.
    const double target_us = std::max(1.0, lookups[0].cpu.p50_us);
    int64_t rounds = 1000;
    uint64_t sink = 0;
    std::vector<double> us;
    for (int i = 0; i < 200; ++i) {
      const Clock::time_point start = Clock::now();
      sink += Spin(rounds);
      us.push_back(Micros(Clock::now() - start));
    }
    const double per_round = Summarize("", us).p50_us / rounds;
    rounds = std::max<int64_t>(1, static_cast<int64_t>(target_us / per_round));
    const int64_t calls = o.other_lookups;
    Sampler sampler(calls);
    for (int64_t i = 0; i < calls; ++i) {
      sampler.Start();
      sink += Spin(rounds);
      sampler.Stop();
    }
    lookups.push_back(sampler.Summary("noise: fixed work, a p50 Best's CPU"));
    if (sink == 42) std::printf(" ");
  }
  db.reset();

  // Report.
  const double per_built = built ? 1.0 / built : 0.0;
  if (!o.lookups_only) {
    std::printf(
        "\nrecords: %" PRId64 " built + %" PRId64 " in the sweep = %" PRId64
        "; %.1f instructions and %.0f bytes of trace per record (mean)\n",
        built, total_records - built, total_records, mean_instructions,
        trace_bytes * per_built);
    std::printf("generating the build's records took %.1f s (not timed)\n",
                commits.front().generate_seconds);
    std::printf("file: %s after the build (%.0f bytes/record), %s at the end\n",
                Human(build_file_bytes).c_str(), build_file_bytes * per_built,
                Human(file_bytes).c_str());
    std::printf(
        "\ncommit throughput (per Commit call: validate + insert + COMMIT; "
        "records/s of wall time, and per CPU-second of this process)\n");
    std::printf("%-6s %-6s %6s %8s %7s %10s %11s %9s %9s %9s\n", "phase",
                "sync", "batch", "records", "commits", "records/s", "rec/CPU-s",
                "p50 ms", "p99 ms", "max ms");
    for (const CommitFigure& f : commits) {
      std::printf("%-6s %-6s %6d %8" PRId64 " %7" PRId64
                  " %10.0f %11.0f %9.3f %9.3f %9.3f\n",
                  f.name.c_str(), f.durable ? "FULL" : "NORMAL", f.batch,
                  f.records, f.commits, f.records_per_s,
                  f.records / f.cpu_seconds, f.per_commit.p50_us / 1000,
                  f.per_commit.p99_us / 1000, f.per_commit.max_us / 1000);
    }
  }
  std::printf(
      "\nlookups in a fresh read-only connection, µs per call; before them "
      "the OS page cache held %.0f%% of the file (%.0f%% as found%s), load "
      "average %s\n",
      resident * 100, resident_found * 100,
      o.os_cache == Options::OsCache::kWarm    ? ", then read through"
      : o.os_cache == Options::OsCache::kEvict ? ", then evicted"
                                               : "",
      load_before_lookups.c_str());
  std::printf("first Best after open (cold connection): %.1f µs\n", cold_us);
  std::printf("%-35s %6s|%6s %6s %6s %6s %6s|%5s %5s|%6s %6s|%5s %5s\n", "", "",
              "wall", "", "", "", "", "preem", "disk", "clean", "", "CPU", "");
  std::printf("%-35s %6s|%6s %6s %6s %6s %6s|%5s %5s|%6s %6s|%5s %5s\n", "call",
              "calls", "mean", "p50", "p90", "p99", "max", "pted%", "read%",
              "p99", "max", "p50", "p99");
  for (const Sampler::Figure& f : lookups) {
    const double calls = std::max<int64_t>(1, f.wall.calls);
    std::printf("%-35s %6" PRId64
                "|%6.1f %6.1f %6.1f %6.1f %6.0f|%5.2f %5.2f|%6.1f %6.0f|%5.1f "
                "%5.1f\n",
                f.name.c_str(), f.wall.calls, f.wall.mean_us, f.wall.p50_us,
                f.wall.p90_us, f.wall.p99_us, f.wall.max_us,
                100.0 * f.preempted / calls, 100.0 * f.disk / calls,
                f.clean.p99_us, f.clean.max_us, f.cpu.p50_us, f.cpu.p99_us);
  }
  std::printf(
      "(preempted: calls with an involuntary context switch; disk read: calls "
      "with block input; clean: the other calls)\n");
  std::printf(
      "load average (1, 5, 15 min) at the start: %s, at the end: %s (%ld "
      "CPUs)\n",
      load_at_start.c_str(), LoadAverage().c_str(),
      sysconf(_SC_NPROCESSORS_ONLN));
  const double build_rate =
      commits.empty() ? 0.0 : commits.front().records_per_s;
  const Latency& best = lookups[0].wall;
  std::printf(
      "\ntargets: Best p99 <= 100 µs: %s (%.1f µs; %.1f µs over the calls "
      "neither preempted nor reading the disk)",
      best.p99_us <= 100 ? "met" : "NOT met", best.p99_us,
      lookups[0].clean.p99_us);
  if (!o.lookups_only) {
    std::printf(
        "; >= 10^4 records/s committed: %s (%.0f records/s building in "
        "batches of %d, durable; %.0f per CPU-second)",
        build_rate >= 1e4 ? "met" : "NOT met", build_rate, o.build_batch,
        commits.front().records / commits.front().cpu_seconds);
  }
  std::printf("\n");

  if (!o.json.empty()) {
    std::string j = absl::StrFormat(
        "{\n  \"records\": %d, \"built\": %d, \"tasks\": %d, \"targets\": %d,\n"
        "  \"trace_bytes_mean\": %.1f, \"instructions_mean\": %.2f,\n"
        "  \"file_bytes_after_build\": %d, \"file_bytes\": %d,\n"
        "  \"first_best_us\": %.2f, \"resident_before_lookups\": %.3f,\n"
        "  \"load_at_start\": \"%s\", \"load_before_lookups\": \"%s\",\n  "
        "\"commits\": [\n",
        total_records, built, o.tasks, o.targets, trace_bytes * per_built,
        mean_instructions, build_file_bytes, file_bytes, cold_us, resident,
        load_at_start, load_before_lookups);
    for (size_t i = 0; i < commits.size(); ++i) {
      const CommitFigure& f = commits[i];
      absl::StrAppendFormat(
          &j,
          "    {\"phase\": \"%s\", \"durable\": %s, \"batch\": %d, "
          "\"records\": %d, \"commits\": %d, \"seconds\": %.4f, "
          "\"records_per_s\": %.1f, \"cpu_seconds\": %.4f, "
          "\"commit_p50_us\": %.1f, "
          "\"commit_p99_us\": %.1f, \"commit_max_us\": %.1f}%s\n",
          f.name, f.durable ? "true" : "false", f.batch, f.records, f.commits,
          f.seconds, f.records_per_s, f.cpu_seconds, f.per_commit.p50_us,
          f.per_commit.p99_us, f.per_commit.max_us,
          i + 1 < commits.size() ? "," : "");
    }
    j += "  ],\n  \"lookups\": [\n";
    for (size_t i = 0; i < lookups.size(); ++i) {
      const Sampler::Figure& f = lookups[i];
      absl::StrAppendFormat(
          &j,
          "    {\"call\": \"%s\", \"calls\": %d, \"mean_us\": %.2f, "
          "\"p50_us\": %.2f, \"p90_us\": %.2f, \"p99_us\": %.2f, "
          "\"max_us\": %.2f, \"preempted_calls\": %d, "
          "\"disk_read_calls\": %d, "
          "\"clean_p50_us\": %.2f, \"clean_p99_us\": %.2f, "
          "\"clean_max_us\": %.2f, \"cpu_p50_us\": %.2f, "
          "\"cpu_p99_us\": %.2f, \"cpu_max_us\": %.2f}%s\n",
          f.name, f.wall.calls, f.wall.mean_us, f.wall.p50_us, f.wall.p90_us,
          f.wall.p99_us, f.wall.max_us, f.preempted, f.disk, f.clean.p50_us,
          f.clean.p99_us, f.clean.max_us, f.cpu.p50_us, f.cpu.p99_us,
          f.cpu.max_us, i + 1 < lookups.size() ? "," : "");
    }
    j += "  ]\n}\n";
    if (o.json == "-") {
      std::fputs(j.c_str(), stdout);
    } else {
      FILE* out = std::fopen(o.json.c_str(), "w");
      if (!out) Die("cannot write " + o.json);
      std::fputs(j.c_str(), out);
      std::fclose(out);
    }
  }

  if (!o.keep && !o.lookups_only) {
    for (const char* suffix : {"", "-wal", "-shm"})
      std::remove((o.db + suffix).c_str());
  } else if (!o.lookups_only) {
    std::printf("kept %s\n", o.db.c_str());
  }
  return 0;
}
