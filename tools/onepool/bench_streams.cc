#include "tools/onepool/bench_streams.h"

#include <algorithm>
#include <latch>
#include <thread>

#include "tools/onepool/run_inputs.h"

namespace onepool::cli {

namespace {

// Everything one stream touches: its Session, its outputs, its results.
struct Stream {
  Session* session = nullptr;
  std::vector<HostTensor> outputs;
  TimedRuns runs;
  Status status;
};

// The extra Sessions share the Model and reuse stream 0's plan (no planning per stream).
Expected<std::vector<std::unique_ptr<Session>>> extra_sessions(const LoadedSession& loaded,
                                                               SessionOptions options, int count) {
  options.plan_override = &loaded.session->plan();
  std::vector<std::unique_ptr<Session>> sessions;
  for (int i = 0; i < count; ++i) {
    ONEPOOL_ASSIGN_OR_RETURN(auto session, Session::create(loaded.model, options));
    sessions.push_back(std::move(session));
  }
  return sessions;
}

// From the first stream's start to the last one's end (each stream clocks itself: a thread
// that only waits for them may wake late).
double wall_seconds(const std::vector<TimedRuns>& streams) {
  auto begin = streams.front().begin;
  auto end = streams.front().end;
  for (const TimedRuns& stream : streams) {
    begin = std::min(begin, stream.begin);
    end = std::max(end, stream.end);
  }
  return std::chrono::duration<double>(end - begin).count();
}

void run_stream(Stream& stream, std::span<const TensorView> inputs, const RunBudget& budget,
                size_t traced_runs, std::latch& ready, RunCounter& counter) {
  std::vector<TensorView> outputs = views_of(stream.outputs);
  stream.status = warm_up(*stream.session, inputs, outputs, budget, stream.runs);
  ready.arrive_and_wait();  // even after an error, or the others would wait forever
  if (!stream.status.is_ok()) return;
  stream.status =
      measure(*stream.session, inputs, outputs, budget, traced_runs, counter, stream.runs);
}

}  // namespace

Expected<StreamsRun> run_streams(const LoadedSession& loaded, SessionOptions options, int streams,
                                 std::span<const TensorView> inputs, const RunBudget& budget,
                                 size_t traced_runs) {
  ONEPOOL_ASSIGN_OR_RETURN(auto extra, extra_sessions(loaded, options, streams - 1));
  std::vector<Stream> state(static_cast<size_t>(streams));
  for (size_t i = 0; i < state.size(); ++i) {
    state[i].session = i == 0 ? loaded.session.get() : extra[i - 1].get();
    state[i].outputs = make_output_tensors(*loaded.model);
  }
  RunCounter counter{0};
  ProgressReporter progress(budget, streams, counter);
  std::latch ready(streams);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < state.size(); ++i) {
    threads.emplace_back(run_stream, std::ref(state[i]), inputs, std::cref(budget),
                         i == 0 ? traced_runs : 0, std::ref(ready), std::ref(counter));
  }
  for (std::thread& thread : threads) thread.join();
  StreamsRun run;
  for (Stream& stream : state) {
    ONEPOOL_RETURN_IF_ERROR(stream.status);
    run.streams.push_back(std::move(stream.runs));
  }
  run.elapsed_s = wall_seconds(run.streams);
  run.outputs = std::move(state[0].outputs);
  return run;
}

}  // namespace onepool::cli
