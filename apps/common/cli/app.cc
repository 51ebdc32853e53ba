// One CLI11 setup for every app: the help laid out by groups, errors as one line naming the option.
#include "apps/common/cli/app.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <utility>

#include "apps/common/cli/eal_side.h"
#include "apps/common/cli/values.h"
#include "apps/common/cli_number.h"
#include "apps/common/output_file.h"
#include "apps/common/version_line.h"

namespace droce::apps::cli {

namespace {

constexpr std::size_t kHelpColumn = 28;  // where the descriptions start, as in the hand-written help
constexpr const char* kGeneral = "general";

// --help as the hand-written helps were laid out: usage and description first, options by group.
class Layout : public CLI::Formatter {
 public:
  explicit Layout(std::string usage) : usage_(std::move(usage)) { column_width(kHelpColumn); }
  // The usage line and description, the groups in the order the app declared them (--help,
  // --version and --config last), then the note on suffixes and --config.
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    std::vector<std::string> groups = app->get_groups();
    std::stable_partition(groups.begin(), groups.end(), [](const std::string& g) { return g != kGeneral; });
    std::string out = usage_ + "\n";
    for (const std::string& group : groups) {
      const auto opts =
          app->get_options([&group](const CLI::Option* o) { return o->get_group() == group && o->nonpositional(); });
      if (!group.empty() && !opts.empty()) out += make_group(group, false, opts);
    }
    return out + "\n" + kSuffixNote + "\n";
  }

 private:
  std::string usage_;
};

// Control bytes of a hostile argument would break the one-line promise.
std::string one_line(std::string_view text) {
  std::string s;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    s += u < 0x20 || u == 0x7F ? '?' : c;
  }
  return s;
}

// CLI11 names a missing value "NAME: 1 required TYPE missing"; say it as the apps always did.
std::string missing_value(const std::string& what) {
  const auto colon = what.find(": ");
  if (colon != std::string::npos && what.find(" required ", colon) != std::string::npos && what.size() >= 8 &&
      what.compare(what.size() - 8, 8, " missing") == 0)
    return what.substr(0, colon) + " needs a value (see --help)";
  return what;
}

}  // namespace

std::unique_ptr<CLI::App> make_app(const std::string& name, const std::string& usage) {
  auto app = std::make_unique<CLI::App>("", name);
  app->formatter(std::make_shared<Layout>(usage));
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app->allow_config_extras(CLI::config_extras_mode::error);  // a misspelt name in --config is refused
  app->get_help_ptr()->description("this text")->group(kGeneral);
  app->set_version_flag("--version", version_line(name), "droce's and DPDK's versions")->group(kGeneral);
  app->set_config("--config", "", "read options from FILE (name = value a line; see below)")
      ->type_name("FILE")
      ->group(kGeneral);
  return app;
}

std::string error_text(const CLI::App& app, const CLI::Error& e) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    const std::vector<std::string> extra = app.remaining();
    if (!extra.empty()) {
      const std::string& first = extra.front();
      return one_line((first.size() > 1 && first[0] == '-' ? "unknown option " : "unexpected argument ") +
                      apps::quoted(first) + " (see --help)");
    }
  }
  if (dynamic_cast<const CLI::FileError*>(&e) != nullptr) return one_line("--config: " + what);
  if (dynamic_cast<const CLI::ConfigError*>(&e) != nullptr) {
    const std::string unknown = "INI was not able to parse ";  // a name no option has
    if (what.rfind(unknown, 0) == 0)
      return one_line("--config: " + apps::quoted(what.substr(unknown.size())) + " is not an option (see --help)");
    return one_line("--config: " + what);
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) return one_line(missing_value(what));
  return one_line(what);
}

int fail(const CLI::App& app, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), one_line(message).c_str());
  return -1;
}

int parse(CLI::App& app, const std::vector<std::string>& args, const std::vector<std::string>& eal) {
  if (const std::string own = app_option_among_eal(app, eal); !own.empty())
    return fail(app, own + " is " + app.get_name() + "'s option: put it after --");
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help() << std::flush;
    return 1;
  } catch (const CLI::CallForVersion& v) {
    std::cout << v.what() << std::endl;
    return 1;
  } catch (const CLI::Error& e) {
    return fail(app, error_text(app, e));
  }
  // An output given "-" takes stdout now, before EAL or the app prints anything (output_file.h).
  for (const CLI::Option* o : app.get_options())
    if (o->get_type_name() == kDashOutput && o->count() > 0 && o->results().back() == "-")
      if (Status s = claim_stdout(o->get_name()); !s.ok()) return fail(app, s.message());
  return 0;
}

bool given(const CLI::App& app, const std::string& name) {
  const CLI::Option* o = app.get_option_no_throw(name);
  return o != nullptr && o->count() > 0;
}

}  // namespace droce::apps::cli
