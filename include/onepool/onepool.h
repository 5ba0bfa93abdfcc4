// OnePool: ONNX inference with one static memory pool. Include this one header.
#pragma once

#include "onepool/dynamic_session.h"
#include "onepool/library.h"
#include "onepool/logging.h"
#include "onepool/model.h"
#include "onepool/plan.h"
#include "onepool/session.h"
#include "onepool/session_pool.h"
#include "onepool/shape_profile.h"
#include "onepool/status.h"
#include "onepool/tensor.h"
#include "onepool/thread_pool.h"
