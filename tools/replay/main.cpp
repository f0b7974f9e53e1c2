// dpstream-replay: replays a logged stream of rows through private online PCA (follow-the-perturbed-
// leader on a continual-release covariance) and measures its regret against the best fixed
// k-subspace in hindsight, next to the non-private follow-the-leader baseline. The work is in
// tools/replay/ (run.hpp: the run, on dpstream/session/online_pca_session.hpp, whose threads do the work; report.hpp: what is printed).
#include "common/commands.hpp"

int main(int argc, char** argv) { return dpstream::tools::replay_command(argc, argv); }
