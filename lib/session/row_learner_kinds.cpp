// The table of row-fed learners (row_learner.hpp): one line each, its maker in lib/session/learners/.
#include "dpstream/session/row_learner.hpp"

namespace dpstream::session {

std::unique_ptr<RowLearner> make_oja_learner(const RowLearnerSetup& setup);    // learners/oja.cpp
std::unique_ptr<RowLearner> make_power_learner(const RowLearnerSetup& setup);  // learners/power.cpp
std::unique_ptr<RowLearner> make_gauss_learner(const RowLearnerSetup& setup);  // learners/gauss.cpp

const std::vector<RowLearnerKind>& row_learner_kinds() {
  static const std::vector<RowLearnerKind> kinds = {
      {"oja", make_oja_learner},
      {"power", make_power_learner},
      {"gauss", make_gauss_learner},
  };
  return kinds;
}

Eigen::VectorXd RowLearner::gains(const Eigen::Ref<const Eigen::MatrixXd>& rows) const {
  return (rows * basis()).rowwise().squaredNorm();
}

}  // namespace dpstream::session
