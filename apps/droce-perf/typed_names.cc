// Option spellings as typed: one pass over the arguments ahead of CLI11's own.
#include "apps/droce-perf/typed_names.h"

namespace droce::perf {

namespace {

// The option an argument names, and whether its value is attached ("--name=value", "-s64").
struct Named {
  const CLI::Option* option = nullptr;
  std::string name;
  bool attached = false;
};

Named named(const CLI::App& app, const std::string& arg) {
  Named n;
  if (arg.size() < 2 || arg[0] != '-') return n;
  if (arg[1] == '-') {
    const auto eq = arg.find('=');
    n.name = arg.substr(0, eq);
    n.attached = eq != std::string::npos;
  } else {
    n.name = arg.substr(0, 2);  // a letter; what follows it is its value (or more letters: -ab)
    n.attached = arg.size() > 2;
  }
  n.option = app.get_option_no_throw(n.name);
  return n;
}

}  // namespace

engine::Status TypedNames::scan(const CLI::App& app, const std::vector<std::string>& args) {
  app_ = &app;
  typed_.clear();
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;  // the rest are positional
    const Named n = named(app, args[i]);
    if (n.option == nullptr || !n.option->nonpositional()) continue;
    typed_[n.option].push_back(n.name);
    const bool takes_value = n.option->get_items_expected_max() > 0;
    const bool long_name = args[i][1] == '-';
    if (!takes_value && long_name && n.attached)
      return engine::Status::error(engine::StatusCode::kInvalidArgument, n.name + " takes no value");
    if (takes_value && !n.attached) {
      if (i + 1 == args.size())
        return engine::Status::error(engine::StatusCode::kInvalidArgument, n.name + " needs a value");
      ++i;  // its value, whatever it looks like (CLI11 takes it so)
    }
  }
  return {};
}

std::string TypedNames::operator()(const std::string& name) const {
  if (app_ == nullptr) return name;
  const auto it = typed_.find(app_->get_option_no_throw(name));
  return it == typed_.end() ? name : it->second.back();
}

std::string TypedNames::nth(const std::string& name, std::size_t i) const {
  if (app_ == nullptr) return name;
  const auto it = typed_.find(app_->get_option_no_throw(name));
  return it == typed_.end() || i >= it->second.size() ? name : it->second[i];
}

}  // namespace droce::perf
