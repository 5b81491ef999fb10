// The option table's values: parsing a row's text (its kind, range and
// choices), and the table as `list` publishes it (the `options` event).
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/option_table.h"
#include "util/json.h"

namespace mwperf {
namespace {

bool to_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool to_i64(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool to_real(const std::string& s, double* out) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.15g", v);
  return b;
}

std::string spaced(const char* list) {  // "a,b" -> "a, b"
  std::string out;
  for (const char* c = list; *c; ++c) out += *c == ',' ? std::string(", ") : std::string(1, *c);
  return out;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool within(const OptionRow& r, double v) { return v >= r.min && v <= r.max; }

// A number in JSON: an integer where it is one (and exact), else a real.
void number(JsonObject& j, const char* key, double v) {
  if (std::fabs(v) < 9007199254740992.0 && v == std::floor(v))
    j.num(key, int64_t(v));
  else
    j.real(key, v);
}

// A list item as JSON: a whole number or a string (lists hold no reals or flags).
std::string item_json(Kind k, const Value& v) {
  if (k == Kind::bytes || k == Kind::count) return std::to_string(v.u);
  if (k == Kind::ns || k == Kind::integer) return std::to_string(v.i);
  return "\"" + json_escape(v.s) + "\"";
}

const char* mode_names[] = {"latency", "throughput", "rate", "burst"};

}  // namespace

const char* to_string(Kind k) {
  switch (k) {
    case Kind::bytes:
      return "bytes";
    case Kind::ns:
      return "ns";
    case Kind::hz:
      return "hz";
    case Kind::count:
      return "count";
    case Kind::integer:
      return "integer";
    case Kind::fraction:
      return "fraction";
    case Kind::choice:
      return "choice";
    case Kind::flag:
      return "flag";
    case Kind::history:
      return "history";
    case Kind::text:
      return "text";
    case Kind::list:
      return "list";
  }
  return "?";
}

const char* unit_of(Kind k) { return k == Kind::bytes ? "B" : k == Kind::ns ? "ns" : k == Kind::hz ? "Hz" : ""; }

const char* to_string(Command c) {
  switch (c) {
    case Command::run:
      return "run";
    case Command::wakeup:
      return "wakeup";
    case Command::floor:
      return "floor";
    case Command::discover:
      return "discover";
  }
  return "?";
}

const char* to_string(Group g) {
  switch (g) {
    case Group::point:
      return "point";
    case Group::qos:
      return "qos";
    case Group::measure:
      return "measure";
    case Group::control:
      return "control";
  }
  return "?";
}

bool listed(const char* list, const std::string& value) {
  const std::string l = std::string(",") + list + ",";
  return l.find("," + value + ",") != std::string::npos;
}

bool asks(const OptionRow& r, const std::string& text) { return r.def == nullptr || text != r.def; }

std::string parse_value(const OptionRow& r, const std::string& text, Value* v) {
  const std::string range = "from " + num(r.min) + " to " + num(r.max);
  switch (r.kind) {
    case Kind::bytes:
      if (!to_u64(text, &v->u) || !within(r, double(v->u))) return "must be a whole number of bytes " + range;
      break;
    case Kind::count:
      if (!to_u64(text, &v->u) || !within(r, double(v->u))) return "must be a whole number " + range;
      break;
    case Kind::ns:
      if (!to_i64(text, &v->i) || !within(r, double(v->i))) return "must be a whole number of nanoseconds " + range;
      break;
    case Kind::integer:
      if (!to_i64(text, &v->i) || !within(r, double(v->i))) return "must be a whole number " + range;
      break;
    case Kind::hz:
      if (!to_real(text, &v->d) || !within(r, v->d)) return "must be a rate in Hz " + range;
      break;
    case Kind::fraction:
      if (!to_real(text, &v->d) || !within(r, v->d)) return "must be a number " + range;
      break;
    case Kind::choice:
      if (text.empty() || (*r.choices && !listed(r.choices, text))) return "choose from: " + spaced(r.choices);
      v->s = text;
      return "";
    case Kind::flag:
      if (text != "0" && text != "1") return "must be 0 or 1";
      v->b = text == "1";
      return "";
    case Kind::history:
      v->s = text;
      if (text == "keep-all") {
        v->u = 0;
        return "";
      }
      if (text.rfind("keep-last:", 0) == 0 && to_u64(text.substr(10), &v->u) && within(r, double(v->u))) return "";
      return "is not keep-last:N (N " + range + ") or keep-all";
    case Kind::text:
      if (text.empty()) return "must not be empty";
      v->s = text;
      return "";
    case Kind::list: {
      v->list.clear();
      OptionRow each = r;
      each.kind = r.item;
      bool ok = true;
      for (size_t start = 0; ok && start <= text.size();) {  // "32," has an empty (bad) last item
        size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        Value item;
        ok = parse_value(each, text.substr(start, end - start), &item).empty() && v->list.size() < r.items_max;
        v->list.push_back(item);
        start = end + 1;
      }
      if (ok && v->list.size() >= r.items_min) return "";
      const std::string count = r.items_min == r.items_max
                                    ? std::to_string(r.items_min)
                                    : std::to_string(r.items_min) + " to " + std::to_string(r.items_max);
      return "must be " + count + " comma-separated " +
             (r.item == Kind::choice  ? "words of: " + spaced(r.choices)
              : r.item == Kind::bytes ? "whole numbers of bytes " + range
                                      : "whole numbers " + range);
    }
  }
  if (*r.choices) {  // a number that must also be one of a few
    const double got = r.kind == Kind::fraction || r.kind == Kind::hz ? v->d : double(v->u);
    for (const std::string& c : split(r.choices)) {
      double want = 0;
      if (to_real(c, &want) && std::fabs(want - got) < 1e-12) return "";
    }
    return "choose from: " + spaced(r.choices);
  }
  return "";
}

std::string options_event() {
  std::string rows = "[";
  for (const OptionRow& r : option_rows()) {
    JsonObject j;
    const Kind k = r.kind == Kind::list ? r.item : r.kind;  // a list's range, choices and unit are its items'
    j.str("name", r.name).str("kind", to_string(r.kind)).str("unit", unit_of(k)).str("group", to_string(r.group));
    if (k != Kind::choice && k != Kind::flag && k != Kind::text) {
      number(j, "min", r.min);
      number(j, "max", r.max);
    } else {
      j.null("min").null("max");
    }
    if (r.kind == Kind::list)
      j.str("item", to_string(r.item))
          .raw("items", "[" + std::to_string(r.items_min) + "," + std::to_string(r.items_max) + "]");
    if (*r.choices)
      j.raw("choices", json_list(r.choices));
    else
      j.null("choices");
    if (r.def == nullptr) {
      j.null("default");
    } else {
      Value v;
      parse_value(r, r.def, &v);  // a unit test checks every default parses
      switch (r.kind) {
        case Kind::bytes:
        case Kind::count:
          j.unum("default", v.u);
          break;
        case Kind::ns:
        case Kind::integer:
          j.num("default", v.i);
          break;
        case Kind::hz:
        case Kind::fraction:
          j.real("default", v.d);
          break;
        case Kind::flag:
          j.boolean("default", v.b);
          break;
        case Kind::list: {
          std::string items = "[";
          for (const Value& item : v.list) items += (items.size() > 1 ? "," : "") + item_json(k, item);
          j.raw("default", items + "]");
          break;
        }
        default:
          j.str("default", r.def);
      }
    }
    if (*r.capability)
      j.str("capability", r.capability).str("refusal", r.refusal);
    else
      j.null("capability").null("refusal");
    std::vector<std::string> modes, roles;
    for (unsigned m = 0; m < 4; ++m)
      if (r.modes & (1u << m)) modes.push_back(mode_names[m]);
    if (r.roles & kPub) roles.push_back("pub");
    if (r.roles & kSub) roles.push_back("sub");
    j.strs("modes", modes).strs("roles", roles).str("command", to_string(r.command));
    j.boolean("required", r.required).boolean("point_key", r.point_key).boolean("pair", r.pair);
    if (*r.record)
      j.str("record", r.record);
    else
      j.null("record");
    if (*r.label)
      j.str("label", r.label).boolean("label_default", r.label_default);
    else
      j.null("label").boolean("label_default", false);
    j.str("help", r.help);
    rows += (rows.size() > 1 ? "," : "") + j.done();
  }
  std::string limits = "[";
  for (const LimitRule& l : limit_rules()) {
    JsonObject j;
    j.str("option", l.option).str("limit", l.limit);
    if (*l.when)
      j.str("when", l.when).str("is", l.is);
    else
      j.null("when").null("is");
    limits += (limits.size() > 1 ? "," : "") + j.str("text", l.text).done();
  }
  std::string conflicts = "[";
  for (const ConflictRule& c : conflict_rules())
    conflicts += (conflicts.size() > 1 ? "," : "") + JsonObject()
                                                         .str("option", c.option)
                                                         .str("value", c.value)
                                                         .str("other", c.other)
                                                         .str("other_value", c.other_value)
                                                         .str("text", c.text)
                                                         .done();
  return JsonObject()
      .str("event", "options")
      .raw("options", rows + "]")
      .raw("limits", limits + "]")
      .raw("conflicts", conflicts + "]")
      .done();
}

}  // namespace mwperf
