// Precompiled for the extension's translation units: pybind11 (with its numpy and Eigen casters),
// Eigen and the library's stream headers are most of each unit's compile time (~30 s each).
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Eigen/Core>

#include "dpstream/stream/continual_sum.hpp"
