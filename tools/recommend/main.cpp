// dpstream-recommend: private matrix completion (Frank-Wolfe with joint DP; ALS / IRLS with Gaussian,
// Laplace or Huber noise), scored on a held-out split next to the item-mean and global-mean
// baselines. The work is in tools/recommend/ (run.hpp).
#include "common/commands.hpp"

int main(int argc, char** argv) { return dpstream::tools::recommend_command(argc, argv); }
