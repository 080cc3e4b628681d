// iris::run: starts a job's ranks (threads, or the processes mpirun started), gives
// each its Context, and ends the job together when one fails; and device_count.
#include "core/context_impl.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "backend/backend.hpp"
#include "job/bootstrap.hpp"
#include "iris/error.hpp"
#include "iris/log.hpp"

namespace iris {

int device_count() {
  try {
    return backend::active().device_count();
  } catch (const Error&) {  // NoDeviceError, or the driver failing to count
    return 0;
  }
}

namespace {
// What a rank whose body threw something other than a std::exception reports (it would
// otherwise end the process through std::terminate, with no word on which rank).
constexpr const char* kNotAnException =
    "the rank's body threw a value that is not a std::exception (such as `throw 42`); throw iris::Error or "
    "another std::exception to say what went wrong";
}  // namespace

int run(const Options& options, const std::function<void(Context&)>& body) {
  options.validate();
  backend::select(options.backend);
  backend::active().set_race_check(options.check_races);
  // The host backend runs ranks as threads of one process: an MPI launcher's variables
  // (a stray PMI_SIZE in the environment, or mpirun itself) do not make it an MPI job.
  const bool host = std::string_view(backend::active().name()) == "host";
  if (host && launched_by_mpi()) {
    log(LogLevel::warn, "the host backend runs its ranks as threads of this process; the MPI launcher's "
                        "environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE, ...) is ignored");
  }
  if (!host && launched_by_mpi()) {
    backend::active().require();  // NoDeviceError before MPI starts
    auto boot = make_mpi_bootstrap(options.host_timeout);
    set_log_rank(boot->rank(), boot->world());
    log_environment();
    if (boot->world() > device::kMaxRanks) {
      throw Error("mpirun started " + std::to_string(boot->world()) + " ranks; at most " +
                  std::to_string(device::kMaxRanks) + " are supported");
    }
    if (options.ranks != 0 && options.ranks != boot->world()) {
      log(LogLevel::warn, "--ranks " + std::to_string(options.ranks) + " ignored: mpirun started " +
                              std::to_string(boot->world()) + " ranks");
    }
    std::unique_ptr<Context> ctx;
    auto job = std::make_shared<Job>();
    try {
      ctx.reset(new Context(std::make_unique<Context::Impl>(std::move(boot), options, job)));
      body(*ctx);
    } catch (const std::exception& e) {
      log(LogLevel::error, e.what());
      abort_mpi_job();  // peers may be blocked in a collective with this rank
    } catch (...) {
      log(LogLevel::error, kNotAnException);
      abort_mpi_job();
    }
    ctx.reset();
    return 0;  // a failing rank ends the whole job through MPI_Abort
  }

  log_environment();
  const int ndev = backend::active().device_count();  // throws NoDeviceError: no driver / no device
  const int world = options.ranks ? options.ranks : ndev;
  if (world > ndev && !options.share_gpus) {
    throw Error(std::to_string(world) + " ranks requested but only " + std::to_string(ndev) +
                " GPU(s) found; allow several ranks per GPU with Options::share_gpus, --share-gpus or "
                "IRIS_SHARE_GPUS=1");
  }
  if (world > device::kMaxRanks) {
    throw Error("at most " + std::to_string(device::kMaxRanks) + " ranks are supported (got " + std::to_string(world) + ")");
  }
  auto group = make_thread_group(world, options.host_timeout);
  auto job = std::make_shared<Job>();
  std::atomic<int> failures{0};
  std::atomic<int> finished{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      set_log_rank(r, world);
      std::unique_ptr<Context> ctx;
      std::string why;
      bool failed = false;
      try {
        std::unique_ptr<Bootstrap> boot = make_thread_bootstrap(group, r);
        if (backend::active().watches_collectives()) boot = std::make_unique<WatchedBootstrap>(std::move(boot));
        ctx.reset(new Context(std::make_unique<Context::Impl>(std::move(boot), options, job)));
        body(*ctx);
      } catch (const std::exception& e) {
        failed = true;
        why = e.what();
      } catch (...) {
        failed = true;
        why = kNotAnException;
      }
      if (failed) {
        log(LogLevel::error, why);
        // Wake the other ranks (host collectives and device waits) before this
        // context's teardown waits for them.
        // Most messages already start with "rank r: "; say it once.
        const std::string tag = "rank " + std::to_string(r) + ": ";
        if (why.rfind(tag, 0) == 0) why.erase(0, tag.size());
        const bool first = !job->failed.load();
        job->fail("rank " + std::to_string(r) + " failed: " + why);
        if (first) abort_thread_group(*group, tag + why);
        ++failures;
      }
      ctx.reset();
      set_log_rank(-1, 0);
      ++finished;
    });
  }
  // The watchdog: a rank whose kernel does not stop may also never leave its body (a
  // module with a running kernel cannot be unloaded), so do not wait for every thread
  // once one is stuck: give the others a moment to report, then end the process.
  using wd_clock = std::chrono::steady_clock;
  wd_clock::time_point stuck_seen{};
  while (finished.load() < world) {
    if (job->stuck.load()) {
      if (stuck_seen == wd_clock::time_point{}) stuck_seen = wd_clock::now();
      if (wd_clock::now() - stuck_seen > std::chrono::seconds(2)) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!job->stuck.load()) {
    for (auto& t : threads) t.join();
  }
  if (job->stuck.load()) {
    // As PyTorch's watchdog does: a kernel that does not stop keeps the GPU's context,
    // and the process with it, alive however long it runs. Say so and end the process.
    log(LogLevel::error, "ending the process (exit status 1): " + job->stuck_why +
                             "; a kernel still running cannot be stopped from the host");
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  }
  return failures.load() ? 1 : 0;
}

}  // namespace iris
