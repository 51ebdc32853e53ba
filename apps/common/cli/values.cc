// Option adders over the strict number, address and output-path checks the apps always used.
#include "apps/common/cli/values.h"

#include <cstdio>
#include <utility>

#include "apps/common/output_file.h"

namespace droce::apps::cli {

CLI::Option* add_value(CLI::App& app, const std::string& group, const std::string& name, const std::string& type,
                       const std::string& help, ValueParser parse) {
  // Given twice, the last value wins, as it always did; every value is still checked in order
  // (CLI11's TakeLast would drop a bad first one unseen).
  return add_repeatable(app, group, name, type, help, std::move(parse));
}

CLI::Option* add_repeatable(CLI::App& app, const std::string& group, const std::string& name, const std::string& type,
                            const std::string& help, ValueParser parse) {
  return app
      .add_option(
          name,
          [parse = std::move(parse)](const CLI::results_t& values) {
            for (const std::string& text : values)
              if (std::string e = parse(text); !e.empty()) throw CLI::ValidationError(e);
            return true;
          },
          help)
      ->type_name(type)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group(group);
}

CLI::Option* add_real(CLI::App& app, const std::string& group, const std::string& name, const std::string& type,
                      double& field, double lo, double hi, const std::string& help, Suffixes suffixes) {
  return add_value(app, group, name, type, help, [&field, name, lo, hi, suffixes](const std::string& v) {
    return parse_real(name, v, lo, hi, field, suffixes).message();
  });
}

CLI::Option* add_choice(CLI::App& app, const std::string& group, const std::string& name,
                        const std::vector<std::string>& choices, const std::string& help,
                        std::function<void(std::size_t)> set) {
  std::string type, list;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    type += (i == 0 ? "" : "|") + choices[i];
    list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  }
  return add_value(app, group, name, type, help, [name, choices, list, set = std::move(set)](const std::string& v) {
    for (std::size_t i = 0; i < choices.size(); ++i)
      if (v == choices[i]) return set(i), std::string();
    return name + ": " + apps::quoted(v) + " is not " + list;
  });
}

CLI::Option* add_choice(CLI::App& app, const std::string& group, const std::string& name,
                        const std::vector<std::string>& choices, std::string& field, const std::string& help) {
  return add_choice(app, group, name, choices, help, [&field, choices](std::size_t i) { field = choices[i]; });
}

CLI::Option* add_output(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                        const std::string& help, bool dash) {
  return add_value(app, group, name, dash ? kDashOutput : "FILE", help, [&field, name, dash](const std::string& v) {
    if (!(dash && v == "-"))
      if (Status s = check_output_path(name, v); !s.ok()) return s.message();
    field = v;
    return std::string();
  });
}

CLI::Option* add_host(CLI::App& app, const std::string& group, const std::string& name, std::string& field,
                      const std::string& help) {
  return add_value(app, group, name, "HOST", help, [&field, name](const std::string& v) {
    if (v.empty()) return name + ": needs a host name or address";
    field = v;
    return std::string();
  });
}

CLI::Option* add_flag(CLI::App& app, const std::string& group, const std::string& name, bool& field,
                      const std::string& help) {
  return app.add_flag(name, field, help)->group(group);
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string hex(std::uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace droce::apps::cli
