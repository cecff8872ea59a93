// ONNX's protobuf classes, checker and shape inference from Debian's libonnx, which is built
// with the ONNX-ML schema in namespace onnx (its CMake package's definitions). Included by the
// exporter's sources only: the public headers name no protobuf type.
#pragma once

#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#ifndef ONNX_ML
#define ONNX_ML 1
#endif

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
