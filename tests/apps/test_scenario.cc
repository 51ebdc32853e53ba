// The scenario file (docs/scenario.md): good files read field by field, every class of refusal one
// line naming the file and the JSON path, sizes with K/M/G, and the items an app's mapping puts
// before the user's own arguments.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "apps/common/cli/app.h"
#include "apps/common/scenario/scenario.h"
#include "apps/common/scenario/scenario_args.h"

using namespace droce::apps;

namespace {

std::string refusal(const std::string& text) {
  Scenario s;
  const Status st = parse_scenario(text, "s.json", s);
  REQUIRE_FALSE(st.ok());
  return st.message();
}

}  // namespace

TEST_CASE("scenario: the spec's example reads field by field", "[scenario]") {
  const std::string text = R"({
    "name": "incast_4to1_pfc", "description": "4 senders into one receiver, lossless", "seed": 1,
    "duration_ms": 100,
    "fabric": {"topology": "leafspine:2,2", "host_gbps": 1.0, "uplink_gbps": 1.0, "ecmp_hash": "5-tuple,seed=0",
               "delay_us": 0, "buffer_bytes": "1M", "ecn": {"kmin_bytes": 5000, "kmax_bytes": "200K", "pmax": 0.01},
               "pfc": {"xoff_bytes": 100000, "xon_bytes": 50000}, "loss": 0.0,
               "links": ["leaf0-spine1:gbps=0.5,pfc=off"], "link_down": ["0:1@50:80"]},
    "transport": {"cc": "dcqcn", "preset": "paper", "line_gbps": 1.0, "recovery": "gbn", "mtu": 1024,
                  "message_bytes": "16K"},
    "traffic": {"flows": [{"start_ms": 0}, {"start_ms": 0, "stop_ms": 60}, {"start_ms": 20}, {"start_ms": 20}]}
  })";
  Scenario s;
  REQUIRE(parse_scenario(text, "s.json", s).ok());
  CHECK(s.name == "incast_4to1_pfc");
  CHECK(s.file == "s.json");
  CHECK(s.seed == 1u);
  CHECK(s.duration_ms == 100.0);
  CHECK(s.fabric.leaves == 2);
  CHECK(s.fabric.spines == 2);
  CHECK(s.fabric.buffer_bytes == (1u << 20));
  CHECK(s.fabric.ecn->kmin_bytes == 5000u);
  CHECK(s.fabric.ecn->kmax_bytes == 200u * 1024);
  CHECK(s.fabric.ecn->pmax == 0.01);
  REQUIRE(s.fabric.pfc.has_value());
  CHECK(s.fabric.pfc->lossless);
  CHECK(s.fabric.pfc->xoff_bytes == 100000u);
  CHECK(s.fabric.links == std::vector<std::string>{"leaf0-spine1:gbps=0.5,pfc=off"});
  CHECK(s.fabric.link_down == std::vector<std::string>{"0:1@50:80"});
  CHECK(s.transport.recovery == "gbn");
  CHECK(s.transport.mtu == 1024u);
  CHECK(s.transport.message_bytes == 16384u);
  REQUIRE(s.traffic.flows.size() == 4);
  CHECK(s.traffic.flows[1].stop_ms == 60.0);
  CHECK_FALSE(s.traffic.flows[0].stop_ms.has_value());
  CHECK(s.traffic.flows[2].start_ms == 20.0);
  CHECK_FALSE(s.traffic.pattern.has_value());
}

TEST_CASE("scenario: a pattern, pfc true and false, and only a name", "[scenario]") {
  Scenario s;
  REQUIRE(parse_scenario(R"({"name": "ring-8", "fabric": {"pfc": true},
                             "traffic": {"pattern": "allreduce", "algo": "ring", "ranks": 8, "size": "1M"}})",
                         "p.json", s)
              .ok());
  CHECK(s.traffic.pattern == "allreduce");
  CHECK(s.traffic.algo == "ring");
  CHECK(s.traffic.ranks == 8u);
  CHECK(s.traffic.size == (1u << 20));
  CHECK(s.fabric.pfc->lossless);
  CHECK_FALSE(s.fabric.pfc->xoff_bytes.has_value());
  CHECK_FALSE(s.traffic.has_flows);
  REQUIRE(parse_scenario(R"({"name": "x", "fabric": {"pfc": false}})", "p.json", s).ok());
  CHECK_FALSE(s.fabric.pfc->lossless);
  REQUIRE(parse_scenario(R"({"name": "x"})", "p.json", s).ok());
  CHECK_FALSE(s.fabric.pfc.has_value());
  CHECK_FALSE(s.fabric.host_gbps.has_value());
}

TEST_CASE("scenario: unknown keys are refused with the path and the known keys", "[scenario]") {
  CHECK(refusal(R"({"name": "x", "fabric": {"ecn": {"kmin": 1}}})") ==
        "scenario s.json: fabric.ecn.kmin: unknown key (known: kmin_bytes, kmax_bytes, pmax)");
  CHECK(refusal(R"({"name": "x", "colour": 1})").rfind("scenario s.json: colour: unknown key (known: name,", 0) == 0);
  CHECK(refusal(R"({"name": "x", "traffic": {"flows": [{"start_ms": 0, "stop": 1}]}})")
            .rfind("scenario s.json: traffic.flows[0].stop: unknown key", 0) == 0);
  CHECK(refusal(R"({"name": "x", "transport": {"cc": "dcqcn", "pmax": 1}})")
            .rfind("scenario s.json: transport.pmax: unknown key", 0) == 0);
}

TEST_CASE("scenario: wrong types are refused by path", "[scenario]") {
  CHECK(refusal(R"({"name": 7})") == "scenario s.json: name: must be a string");
  CHECK(refusal(R"({"name": "x", "fabric": {"host_gbps": "fast"}})") ==
        "scenario s.json: fabric.host_gbps: must be a number");
  CHECK(refusal(R"({"name": "x", "fabric": {"buffer_bytes": [1]}})")
            .rfind("scenario s.json: fabric.buffer_bytes: must be a whole number", 0) == 0);
  CHECK(refusal(R"({"name": "x", "fabric": {"pfc": "on"}})").rfind("scenario s.json: fabric.pfc: must be", 0) == 0);
  CHECK(refusal(R"({"name": "x", "seed": -1})") == "scenario s.json: seed: must be a whole number");
  CHECK(refusal(R"({"name": "x", "fabric": "star"})") == "scenario s.json: fabric: must be an object");
  CHECK(refusal(R"([1, 2])") == "scenario s.json: (top): must be an object");
  CHECK(refusal(R"({"name": "x", "traffic": {"flows": {}}})")
            .rfind("scenario s.json: traffic.flows: must be a non-empty array", 0) == 0);
}

TEST_CASE("scenario: values out of range and bad names are refused by path", "[scenario]") {
  CHECK(
      refusal(R"({"name": "x", "fabric": {"loss": 1}})").rfind("scenario s.json: fabric.loss: 1 is out of range", 0) ==
      0);
  CHECK(refusal(R"({"name": "x", "fabric": {"host_gbps": 0}})").rfind("scenario s.json: fabric.host_gbps: ", 0) == 0);
  CHECK(refusal(R"({"name": "x", "transport": {"mtu": 1500}})")
            .rfind("scenario s.json: transport.mtu: 1500 is not an IB MTU", 0) == 0);
  CHECK(refusal(R"({"name": "x", "transport": {"cc": "cubic"}})") ==
        "scenario s.json: transport.cc: 'cubic' is not one of none, dcqcn");
  CHECK(refusal(R"({"name": "x", "fabric": {"topology": "ring"}})").rfind("scenario s.json: fabric.topology: ", 0) ==
        0);
  CHECK(refusal(R"({"name": "x", "fabric": {"buffer_bytes": "1Q"}})")
            .rfind("scenario s.json: fabric.buffer_bytes: ", 0) == 0);
  CHECK(refusal(R"({"name": "Big Name"})").rfind("scenario s.json: name: 'Big Name': only a-z", 0) == 0);
  CHECK(refusal(R"({"description": "no name"})") == "scenario s.json: name: required");
  CHECK(refusal(R"({"name": "x", "duration_ms": 10, "traffic": {"flows": [{"start_ms": 10}]}})")
            .rfind("scenario s.json: traffic.flows[0].start_ms: 10 is out of range", 0) == 0);
  CHECK(refusal(R"({"name": "x", "traffic": {"flows": [{"start_ms": 5, "stop_ms": 5}]}})") ==
        "scenario s.json: traffic.flows[0].stop_ms: must be after start_ms");
  CHECK(refusal(R"({"name": "x", "fabric": {"ecn": {"kmin_bytes": 9, "kmax_bytes": 8}}})") ==
        "scenario s.json: fabric.ecn.kmin_bytes: exceeds kmax_bytes");
  CHECK(refusal(R"({"name": "x", "fabric": {"uplink_gbps": 1}})") ==
        "scenario s.json: fabric.uplink_gbps: only with topology leafspine:L,S");
}

TEST_CASE("scenario: exactly one of flows and pattern; not JSON is one line", "[scenario]") {
  CHECK(refusal(R"({"name": "x", "traffic": {}})") ==
        "scenario s.json: traffic: give exactly one of flows and pattern");
  CHECK(refusal(R"({"name": "x", "traffic": {"flows": [{}], "pattern": "alltoall"}})") ==
        "scenario s.json: traffic: give exactly one of flows and pattern");
  CHECK(refusal(R"({"name": "x", "traffic": {"flows": [{}], "ranks": 4}})") ==
        "scenario s.json: traffic.ranks: only with pattern, not with flows");
  const std::string e = refusal("{\"name\": \"x\",\n");
  CHECK(e.rfind("scenario s.json: not JSON: ", 0) == 0);
  CHECK(e.find('\n') == std::string::npos);
  Scenario s;
  CHECK(load_scenario("/nonexistent/s.json", s).message() == "scenario /nonexistent/s.json: cannot be read");
}

TEST_CASE("scenario: items go before the user's arguments, which win", "[scenario]") {
  const std::string path = std::string(SCENARIO_TEST_DIR) + "/flows_star.json";
  auto app = cli::make_app("t", "usage: t");
  double loss = -1;
  std::vector<std::string> links;
  std::string file;
  app->add_option("--loss", loss);
  app->add_option("--link", links)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_scenario_option(*app, "g", file, "a scenario");
  const ScenarioMapper map = [](const Scenario& s, ScenarioArgs& a) {
    a.set("--loss", s.fabric.host_gbps.value());
    a.set("--link", std::string("from-scenario"));
    return Status{};
  };
  std::vector<std::string> own{"--link", "from-user", "--scenario", path, "--loss", "0.02"};
  Scenario loaded;
  REQUIRE(apply_scenario(*app, own, map, loaded) == 0);
  CHECK(loaded.name == "flows_star");
  REQUIRE(cli::parse(*app, own) == 0);
  CHECK(loss == 0.02);                                                     // the command line over the scenario
  CHECK(links == std::vector<std::string>{"from-scenario", "from-user"});  // repeatable: appended
  CHECK(file == path);

  auto bare = cli::make_app("t", "usage: t");
  bare->add_option("--loss", loss);
  add_scenario_option(*bare, "g", file, "a scenario");
  const ScenarioMapper loss_only = [](const Scenario& s, ScenarioArgs& a) {
    a.set("--loss", s.fabric.host_gbps.value());
    return Status{};
  };
  std::vector<std::string> only{"--scenario=" + path};
  REQUIRE(apply_scenario(*bare, only, loss_only, loaded) == 0);
  REQUIRE(cli::parse(*bare, only) == 0);
  CHECK(loss == 0.5);  // the scenario's own value when the command line gives none

  // The mapping's refusal is the app's one line.
  const ScenarioMapper refuse = [](const Scenario& s, ScenarioArgs&) {
    return scenario_refusal(s, "fabric.loss", "t: not modelled");
  };
  std::vector<std::string> refused{"--scenario", path};
  CHECK(apply_scenario(*bare, refused, refuse, loaded) == -1);
  CHECK(number_text(0.01) == "0.01");

  // --scenario in --config would be read after the arguments, too late: refused, not ignored.
  const char* tmp = std::getenv("TMPDIR");
  std::string ini = std::string(tmp != nullptr && *tmp != 0 ? tmp : "/tmp") + "/droce-scenario-test-XXXXXX";
  const int fd = mkstemp(ini.data());
  REQUIRE(fd >= 0);
  const std::string line = "scenario = " + path + "\n";
  REQUIRE(write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
  close(fd);
  auto conf = cli::make_app("t", "usage: t");
  add_scenario_option(*conf, "g", file, "a scenario");
  CHECK(cli::parse(*conf, {"--config", ini}) == -1);
  unlink(ini.c_str());
  CHECK(number_text(150) == "150");
}
