"""OnePool: ONNX inference with one static memory pool.

    import onepool
    s = onepool.Session("model.onnx", shapes={"x": [1, 3, 640, 640]})
    outputs = s.run({"x": array})          # {name: numpy array}

    model = onepool.Model("model.onnx", dims={"batch": 1})
    a, b = onepool.Session(model), onepool.Session(model)   # weights shared
    plan = model.plan()                    # plan.pool_bytes, plan.tensors, plan.to_html()

Every failure raises onepool.Error (a subclass per kind: InvalidArgumentError, NotFoundError,
UnsupportedError, InvalidModelError, ...) with the C++ library's message.
"""

from onepool._onepool import (
    CancelledError,
    CpuThreadPool,
    DeviceError,
    Error,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    InvalidModelError,
    Model,
    NotFoundError,
    OutOfRangeError,
    Plan,
    PlannedTensor,
    PlanStep,
    ResourceExhaustedError,
    Session,
    TensorInfo,
    UnsupportedError,
    __version__,
)

__all__ = [
    "CancelledError",
    "CpuThreadPool",
    "DeviceError",
    "Error",
    "FailedPreconditionError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidModelError",
    "Model",
    "NotFoundError",
    "OutOfRangeError",
    "Plan",
    "PlannedTensor",
    "PlanStep",
    "ResourceExhaustedError",
    "Session",
    "TensorInfo",
    "UnsupportedError",
    "__version__",
]
