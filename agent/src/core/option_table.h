// Every option of the agent, declared once: one row each, with its kind and
// unit, range, choices, default, the adapter capability that gates it (and
// the refusal when it is missing), the modes and roles it applies to, whether
// it identifies a test point, its name in the controller's record and in a QoS
// label, and its help. The agent's parsing (core/options.cpp), its refusals
// (core/description.cpp) and `mwperf-agent list` iterate the rows; `list`
// publishes them (the `options` event), and the controller builds its command
// line, sweep keys, point keys, agent arguments, refusals, records, labels and
// CSV columns from that, never from a copy (docs/agent-protocol.md).
//
// Adding an option is one row here plus the adapters that honour it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mwperf {

struct Options;

// What a value is; the unit follows from it (bytes, ns, Hz). Values on the
// command line are machine values: integers of bytes or nanoseconds, Hz.
enum class Kind {
  bytes,     // a whole number of bytes
  ns,        // an integer of nanoseconds (may be negative when min says so)
  hz,        // a rate in Hz (a real number)
  count,     // a whole number
  integer,   // a signed whole number
  fraction,  // a real number (a share, a level)
  choice,    // one word of `choices` (or of the adapter's capability)
  flag,      // 0 or 1
  history,   // keep-last:N (N in [min, max]) or keep-all
  text,      // any non-empty text
  list,      // comma-separated values of kind `item` (in [min, max], or of `choices`),
             // items_min..items_max of them
};
const char* to_string(Kind k);
const char* unit_of(Kind k);  // "B", "ns", "Hz" or ""

enum class Group {
  point,    // what is measured (mode, size, rate, fan-out, ...)
  qos,      // what the middleware is asked for (its QoS label)
  measure,  // how long and how it is measured (duration, precision, ...)
  control,  // set by the controller for one side of a point (ports, run id, ...): not the user's
};
const char* to_string(Group g);

// The agent's commands that take options: each row is of one of them (a
// name may be a row of two commands, with each its own range and default).
enum class Command { run, wakeup, floor, discover };
const char* to_string(Command c);

// A parsed value: the member of its kind.
struct Value {
  uint64_t u = 0;           // bytes, count, history depth (0: keep-all)
  int64_t i = 0;            // ns, integer
  double d = 0;             // hz, fraction
  bool b = false;           // flag
  std::string s;            // choice, text, history
  std::vector<Value> list;  // list: its items, each the member of the row's `item` kind
};

constexpr unsigned kAnyMode = 0xF;
constexpr unsigned kPub = 1, kSub = 2, kBothRoles = kPub | kSub;

struct OptionRow {
  OptionRow(const char* name, Kind kind, Group group) : name(name), kind(kind), group(group) {}

  const char* name;
  Kind kind;
  Group group;
  double min = 0, max = 0;                // numbers: the range; history: the depth's; list: each item's
  Kind item = Kind::count;                // list: what each item is
  unsigned items_min = 1, items_max = 1;  // list: how many items
  const char* choices = "";               // the value must be one of these ("" = any; for a choice
                                          // gated by a capability: the adapter's list)
  const char* def = nullptr;              // the default, as argv text; nullptr: none (the adapter's own)
  const char* capability = "";            // the adapter capability that gates it ("" none)
  const char* refusal = "";               // why an adapter without it refuses the option
  unsigned modes = kAnyMode;              // bits (1 << Mode) it applies to
  unsigned roles = kBothRoles;
  Command command = Command::run;
  bool required = false;       // in every mode and role it applies to
  bool point_key = false;      // identifies a test point (sweeps, resume, compare)
  bool pair = false;           // may change between the points of one agent pair (--reuse, `next`)
  const char* record = "";     // its field in the controller's record ("qos.history"; "" none)
  const char* label = "";      // its part of a QoS label ("{}" = the value; "" none)
  bool label_default = false;  // the label shows the default value too
  const char* help = "";
  void (*set)(Options&, const Value&) = nullptr;

  // Builder: OptionRow("size", Kind::bytes, Group::point).range(32, 1 << 30)...
  OptionRow& range(double lo, double hi) {
    min = lo;
    max = hi;
    return *this;
  }
  OptionRow& items(unsigned lo, unsigned hi) {
    items_min = lo;
    items_max = hi;
    return *this;
  }
  OptionRow& each(Kind k) {
    item = k;
    return *this;
  }
  OptionRow& among(const char* c) {
    choices = c;
    return *this;
  }
  OptionRow& by_default(const char* d) {
    def = d;
    return *this;
  }
  OptionRow& gated(const char* cap, const char* why) {
    capability = cap;
    refusal = why;
    return *this;
  }
  OptionRow& in_modes(unsigned m) {
    modes = m;
    return *this;
  }
  OptionRow& for_roles(unsigned r) {
    roles = r;
    return *this;
  }
  OptionRow& of(Command c) {
    command = c;
    return *this;
  }
  OptionRow& needed() {
    required = true;
    return *this;
  }
  OptionRow& per_point() {
    pair = true;
    return *this;
  }
  OptionRow& key(const char* record_name) {
    point_key = true;
    record = record_name;
    return *this;
  }
  OptionRow& recorded(const char* record_name) {
    record = record_name;
    return *this;
  }
  OptionRow& labelled(const char* format, bool show_default = false) {
    label = format;
    label_default = show_default;
    return *this;
  }
  OptionRow& says(const char* text) {
    help = text;
    return *this;
  }
  OptionRow& sets(void (*f)(Options&, const Value&)) {
    set = f;
    return *this;
  }
};

// An adapter limit on an option's value: value > the adapter's limit (when
// not 0) is refused, when `when` (another option) has the value `is` (or
// always, when `when` is "").
struct LimitRule {
  const char* option;
  const char* limit;  // a name of Description::limit(): max_size, max_subscribers, max_readers_per_process
  const char* when;
  const char* is;
  const char* text;  // "{mw} <text>": {limit} is the adapter's limit
};

// Two values that cannot go together: `option` = `value` and `other` = `other_value`.
struct ConflictRule {
  const char* option;
  const char* value;
  const char* other;
  const char* other_value;
  const char* text;
};

const std::vector<OptionRow>& option_rows();
const std::vector<LimitRule>& limit_rules();
const std::vector<ConflictRule>& conflict_rules();
// Command c's row named `name` (no leading dashes), nullptr if none.
const OptionRow* find_option(const std::string& name, Command c = Command::run);

// Run option `name`'s default, parsed (an empty Value when it has none).
Value option_default(const char* name);
// Parses `text` as a value of row r into *v: "" or why not (one phrase,
// e.g. "must be a whole number of bytes from 32 to 1073741824").
std::string parse_value(const OptionRow& r, const std::string& text, Value* v);
// Whether `text` asks the adapter for something (a flag's 0 does not).
bool asks(const OptionRow& r, const std::string& text);
// Whether `value` is one of the comma-separated `list`.
bool listed(const char* list, const std::string& value);

// `mwperf-agent list`'s {"event":"options",...} line: every row, limit and conflict.
std::string options_event();

}  // namespace mwperf
