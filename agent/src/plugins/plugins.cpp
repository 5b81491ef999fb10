// See plugins.h.
#include "plugins/plugins.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <map>

namespace mwperf {

std::string agent_dir() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string path = n > 0 ? std::string(self, size_t(n)) : std::string("./");
  return path.substr(0, path.rfind('/') + 1);
}

namespace {

// Why the plugin at `path` is not of this build, or "".
std::string mismatch(const Plugin& p, const std::string& name, const std::string& path) {
  static const Plugin ours = MWPERF_PLUGIN_INIT(nullptr, nullptr);
  std::string d;
  if (p.abi != ours.abi)
    d = "plugin ABI " + std::to_string(p.abi) + ", the agent's " + std::to_string(ours.abi);
  else if (std::strcmp(p.version, ours.version) != 0)
    d = std::string("version ") + p.version + ", the agent's " + ours.version;
  else if (std::strcmp(p.compiler, ours.compiler) != 0)
    d = std::string("compiler ") + p.compiler + ", the agent's " + ours.compiler;
  else if (p.description_size != ours.description_size || p.config_size != ours.config_size)
    d = "another Adapter interface (its structures differ in size)";
  else if (name != p.name)
    d = std::string("it holds adapter '") + p.name + "'";
  return d.empty() ? d : path + " is not of this agent's build: " + d + " (rebuild: make agent)";
}

const Plugin* load(const std::string& name, std::string* why) {
  const std::string path = agent_dir() + "adapters/libmwperf-" + name + ".so";
  if (access(path.c_str(), R_OK) != 0) {
    *why = "plugin " + path + " not found (" + std::strerror(errno) + ")";
    return nullptr;
  }
  // RTLD_GLOBAL, as when it was linked in: the libraries its middleware
  // dlopen()s itself (an rmw implementation) find the plugin's symbols.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    *why = e != nullptr ? e : "dlopen failed";
    return nullptr;
  }
  auto entry = reinterpret_cast<const Plugin* (*)()>(dlsym(handle, "mwperf_plugin_v1"));
  if (entry == nullptr) {
    *why = path + " has no mwperf_plugin_v1(): not an mwperf adapter plugin";
    return nullptr;
  }
  const Plugin* p = entry();
  *why = mismatch(*p, name, path);
  return why->empty() ? p : nullptr;
}

// The last non-empty line of `f` (its last 4 KiB), at most 400 characters.
std::string last_line(FILE* f) {
  if (std::fseek(f, 0, SEEK_END) != 0) return "";
  const long size = std::ftell(f);
  const long from = size > 4096 ? size - 4096 : 0;
  std::fseek(f, from, SEEK_SET);
  std::string text(size_t(size - from), '\0');
  text.resize(std::fread(&text[0], 1, text.size(), f));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  const size_t start = text.rfind('\n');
  std::string line = start == std::string::npos ? text : text.substr(start + 1);
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return line.size() > 400 ? line.substr(0, 400) + "..." : line;
}

}  // namespace

const Plugin* load_plugin(const std::string& name, std::string* why) {
  static std::map<std::string, std::pair<const Plugin*, std::string>> loaded;  // also the refusals
  auto it = loaded.find(name);
  if (it == loaded.end()) {
    std::string reason;
    const Plugin* p = load(name, &reason);
    it = loaded.emplace(name, std::make_pair(p, reason)).first;
  }
  if (why != nullptr) *why = it->second.second;
  return it->second.first;
}

std::string in_child(const std::function<std::string()>& fn, std::string* why) {
  int fds[2];
  if (pipe(fds) != 0) {
    *why = std::string("pipe: ") + std::strerror(errno);
    return "";
  }
  // What the child says on stderr: the reason when its middleware ends it
  // before it can answer (rcl checks RMW_IMPLEMENTATION as it loads and exits).
  FILE* err = std::tmpfile();
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (err != nullptr) dup2(fileno(err), STDERR_FILENO);
    const std::string out = fn();
    for (size_t done = 0; done < out.size();) {
      const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += size_t(n);
    }
    _exit(0);  // not the middleware's exit handlers
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    *why = std::string("fork: ") + std::strerror(errno);
    return "";
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n > 0)
      out.append(buf, size_t(n));
    else if (errno != EINTR)
      break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string said = err != nullptr ? last_line(err) : "";
  if (err != nullptr) std::fclose(err);
  if (out.empty())
    *why = (WIFSIGNALED(status) ? std::string("killed by ") + strsignal(WTERMSIG(status)) + " while loading"
                                : "said nothing (exit " + std::to_string(WEXITSTATUS(status)) + ")") +
           (said.empty() ? "" : ": " + said);
  return out;
}

}  // namespace mwperf
