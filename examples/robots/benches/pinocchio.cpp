// Pinocchio's forward dynamics (`aba`), `crba` and `nonLinearEffects` per call on the
// robots of models/, for the side-by-side with benches/dynamics.rs (bench/RESULTS.md).
// Not built by cargo (it needs the `pin` wheel's headers and libraries); see
// bench/RESULTS.md for the g++ -O3 command.
//
//   pinocchio_bench [--free-flyer] URDF          ns per call, best of 5 passes over 1,000 states
//   pinocchio_bench [--free-flyer] URDF K WHAT   K calls of WHAT (aba, crba, nle) only: run
//                                                under callgrind with K = 1000 and K = 0
// --free-flyer: the robot on a floating base (JointModelFreeFlyer root; the states'
// quaternions normalised).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>
#include <pinocchio/parsers/urdf.hpp>

namespace pin = pinocchio;

static double run(const pin::Model &model, pin::Data &data, const std::vector<Eigen::VectorXd> &qs,
                  const std::vector<Eigen::VectorXd> &vs, const std::vector<Eigen::VectorXd> &taus,
                  const std::string &what, long calls) {
  double sum = 0.0;
  for (long k = 0; k < calls; ++k) {
    size_t i = static_cast<size_t>(k) % qs.size();
    if (what == "crba") {
      sum += pin::crba(model, data, qs[i])(0, 0);
    } else if (what == "nle") {
      sum += pin::nonLinearEffects(model, data, qs[i], vs[i])(0);
    } else {
      sum += pin::aba(model, data, qs[i], vs[i], taus[i])(0);
    }
  }
  return sum;
}

int main(int argc, char **argv) {
  bool free_flyer = argc >= 2 && std::strcmp(argv[1], "--free-flyer") == 0;
  if (free_flyer) {
    --argc;
    ++argv;
  }
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s [--free-flyer] URDF [K WHAT]\n", argv[0]);
    return 2;
  }
  pin::Model model;
  if (free_flyer) {
    pin::urdf::buildModel(argv[1], pin::JointModelFreeFlyer(), model);
  } else {
    pin::urdf::buildModel(argv[1], model);
  }
  pin::Data data(model);
  std::srand(35);
  std::vector<Eigen::VectorXd> qs, vs, taus;
  for (int k = 0; k < 1000; ++k) {
    Eigen::VectorXd q = 3.0 * Eigen::VectorXd::Random(model.nq);
    if (free_flyer) q.segment<4>(3).normalize();
    qs.push_back(q);
    vs.push_back(2.0 * Eigen::VectorXd::Random(model.nv));
    taus.push_back(10.0 * Eigen::VectorXd::Random(model.nv));
  }
  if (argc >= 4) {
    long calls = std::atol(argv[2]);
    double s = run(model, data, qs, vs, taus, argv[3], calls);
    std::printf("%s x%ld: checksum %g\n", argv[3], calls, s);
    return 0;
  }
  for (const char *what : {"aba", "crba", "nle"}) {
    run(model, data, qs, vs, taus, what, 1000);
    double best = 1e30;
    for (int pass = 0; pass < 5; ++pass) {
      auto t0 = std::chrono::steady_clock::now();
      volatile double s = run(model, data, qs, vs, taus, what, 1000);
      (void)s;
      double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / 1000.0;
      if (ns < best) best = ns;
    }
    std::printf("| %s | %s | %.0f |\n", model.name.c_str(), what, best);
  }
  return 0;
}
