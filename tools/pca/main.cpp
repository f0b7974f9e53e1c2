// dpstream-pca: private PCA of a dataset (Analyze Gauss, noisy power method, private Oja, private
// find-and-project, randomized response), scored against the non-private top k of the same rows. The
// work is in tools/pca/ (pca.hpp).
#include "common/commands.hpp"

int main(int argc, char** argv) { return dpstream::tools::pca_command(argc, argv); }
