// A Session over a backend that fails on purpose: a failed kernel preparation, pool allocation,
// input upload, kernel run or output download each comes back from Session::create or
// Session::run as the backend's Status (code and message intact), the backend is destroyed with
// a Session that could not be created (and, under the sanitizer build, nothing leaks), and a
// Session whose run failed runs correctly once the fault is gone.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/generated_models.h"
#include "onepool/onepool.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/session_with_backend.h"

namespace {

using onepool::Backend;
using onepool::Status;
using onepool::StatusCode;
using onepool::TensorView;

enum class Fault { kNone, kPrepare, kBind, kCopyIn, kExecute, kCopyOut };

// What a test controls and observes: the fault to inject, and how many backends are alive.
struct FaultControl {
  Fault fault = Fault::kNone;
  int live_backends = 0;
};

// The CPU backend with one step replaced by a failure while `control.fault` names it.
class FailingBackend final : public Backend {
 public:
  explicit FailingBackend(FaultControl& control) : control_(control) {
    auto cpu = onepool::cpu::create_cpu_backend(1);
    REQUIRE(cpu.has_value());
    inner_ = std::move(cpu).value();
    ++control_.live_backends;
  }
  ~FailingBackend() override { --control_.live_backends; }

  onepool::Device device() const override { return inner_->device(); }
  Status prepare(const onepool::Model& model, onepool::NodeMemoryNeeds& needs) override {
    if (control_.fault == Fault::kPrepare) {
      return onepool::make_status(StatusCode::kUnsupported, "injected: node 'conv' has no kernel");
    }
    return inner_->prepare(model, needs);
  }
  Status bind(const onepool::Model& model, const onepool::Plan& plan, void* caller_pool,
              size_t caller_capacity) override {
    if (control_.fault == Fault::kBind) {
      return onepool::make_status(StatusCode::kResourceExhausted, "injected: pool of ",
                                  plan.pool_bytes, " bytes could not be allocated");
    }
    return inner_->bind(model, plan, caller_pool, caller_capacity);
  }
  TensorView value_view(int32_t id) const override { return inner_->value_view(id); }
  Status copy_in(int32_t id, const TensorView& source) override {
    if (control_.fault == Fault::kCopyIn) {
      return onepool::make_status(StatusCode::kInternal, "injected: upload of value ", id,
                                  " failed");
    }
    return inner_->copy_in(id, source);
  }
  Status copy_out(int32_t id, const TensorView& destination) override {
    if (control_.fault == Fault::kCopyOut) {
      return onepool::make_status(StatusCode::kInternal, "injected: download of value ", id,
                                  " failed");
    }
    return inner_->copy_out(id, destination);
  }
  Status execute() override {
    if (control_.fault == Fault::kExecute) {
      return onepool::make_status(StatusCode::kInternal, "injected: kernel of node 'conv' failed");
    }
    return inner_->execute();
  }
  size_t owned_pool_bytes() const override { return inner_->owned_pool_bytes(); }

 private:
  FaultControl& control_;
  std::unique_ptr<Backend> inner_;
};

std::shared_ptr<const onepool::Model> test_model() {
  return onepool_test::load_generated_model("cnn_fp16_twin32.onnx", false);
}

Status create_with_fault(FaultControl& control, Fault fault) {
  control.fault = fault;
  auto session = onepool::create_session_with_backend(test_model(), onepool::SessionOptions{},
                                                      std::make_unique<FailingBackend>(control));
  return session.has_value() ? Status::ok() : session.status();
}

// Host buffers for every input (a fixed pattern) and output of `model`.
struct Buffers {
  std::vector<std::vector<std::byte>> data;
  std::vector<TensorView> inputs, outputs;

  explicit Buffers(const onepool::Model& model) {
    data.reserve(model.inputs().size() + model.outputs().size());
    for (const auto& info : model.inputs()) add(info, inputs, std::byte{0x3c});
    for (const auto& info : model.outputs()) add(info, outputs, std::byte{0});
  }
  void add(const onepool::TensorInfo& info, std::vector<TensorView>& views, std::byte fill) {
    auto& bytes = data.emplace_back(info.shape.element_count() * onepool::dtype_size(info.dtype));
    std::memset(bytes.data(), static_cast<int>(fill), bytes.size());
    views.push_back({bytes.data(), info.dtype, info.shape, {}});
  }
  std::vector<std::byte> output_bytes() const {
    std::vector<std::byte> all;
    for (size_t i = data.size() - outputs.size(); i < data.size(); ++i) {
      all.insert(all.end(), data[i].begin(), data[i].end());
    }
    return all;
  }
};

TEST_CASE("a failure while creating the Session comes back intact, the backend destroyed") {
  FaultControl control;
  const Status prepare = create_with_fault(control, Fault::kPrepare);
  CHECK(prepare.code() == StatusCode::kUnsupported);
  CHECK(prepare.message() == "injected: node 'conv' has no kernel");
  CHECK(control.live_backends == 0);

  const Status bind = create_with_fault(control, Fault::kBind);
  CHECK(bind.code() == StatusCode::kResourceExhausted);
  CHECK(bind.message().find("could not be allocated") != std::string::npos);
  CHECK(control.live_backends == 0);

  CHECK(create_with_fault(control, Fault::kNone).is_ok());
  CHECK(control.live_backends == 0);  // the Session (and its backend) went out of scope
}

TEST_CASE("a failure during a run comes back intact and the Session recovers") {
  FaultControl control;
  auto model = test_model();
  auto created = onepool::create_session_with_backend(model, onepool::SessionOptions{},
                                                      std::make_unique<FailingBackend>(control));
  REQUIRE_MESSAGE(created.has_value(), created.status().to_string());
  auto& session = *created;
  Buffers buffers(*model);
  REQUIRE(session->run(buffers.inputs, buffers.outputs).is_ok());
  const std::vector<std::byte> expected = buffers.output_bytes();

  const std::pair<Fault, const char*> faults[] = {{Fault::kCopyIn, "injected: upload of value"},
                                                  {Fault::kExecute, "injected: kernel of node"},
                                                  {Fault::kCopyOut, "injected: download of value"}};
  for (const auto& fault_case : faults) {
    const auto& [fault, message] = fault_case;
    CAPTURE(fault_case.second);
    control.fault = fault;
    const Status failed = session->run(buffers.inputs, buffers.outputs);
    CHECK(failed.code() == StatusCode::kInternal);
    CHECK(failed.message().find(message) == 0);
    control.fault = Fault::kNone;
    Buffers fresh(*model);
    REQUIRE(session->run(fresh.inputs, fresh.outputs).is_ok());
    CHECK(fresh.output_bytes() == expected);
  }
  CHECK(control.live_backends == 1);
  session.reset();
  CHECK(control.live_backends == 0);
}

}  // namespace
