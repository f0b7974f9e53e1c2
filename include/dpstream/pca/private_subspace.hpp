// PrivateSubspace: what every private singular-vector method of pca/ releases, in one shape for the
// tools (dpstream-pca) and the streaming refresher. Each method states its own neighbouring
// relation, sensitivity and accounting in its header and charges the accountant it is given.
#pragma once

#include <string>

#include <Eigen/Core>

namespace dpstream::pca {

struct PrivateSubspace {
  // d × k with orthonormal columns: the released estimate of the top-k right singular vectors of the
  // data matrix A (m × d, one row per record), i.e. the top-k eigenvectors of AᵀA.
  Eigen::MatrixXd vectors;
  // Private estimates of the matching eigenvalues of AᵀA (σ_i²), descending; empty when the method
  // releases none. Already private: no further charge to read them.
  Eigen::VectorXd values;
  std::string method;  // "gauss", "power", "oja", "pfp", "rr"
};

}  // namespace dpstream::pca
