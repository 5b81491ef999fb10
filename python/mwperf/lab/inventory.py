"""A lab's hosts as Ansible's inventory names them: one file serves both tools.

The inventory is read by Ansible itself (``ansible-inventory --list``: its
YAML format, groups, ``vars`` and ``host_vars``), and each host's ssh
settings are taken from its variables as Ansible's ssh connection uses them:
``ansible_host`` (else the host's name), ``ansible_user``, ``ansible_port``,
``ansible_ssh_private_key_file``, ``ansible_ssh_common_args`` and
``ansible_ssh_extra_args``. mwperf's own, optional: ``mwperf_data`` (the host's
data address when it is not ``ansible_host``: a second NIC) and ``mwperf_nic``
(the interface DDS uses there).

Pairs (``--pairs a:b,b:c``): the first host publishes, the second subscribes;
``all`` is every two hosts of the inventory, each pair once, in the
inventory's order. A pair's name (``a:b``) is the records' ``host_pair``.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shlex
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from mwperf.errors import UsageError
from mwperf.lab.ansible import Workspace, tool
from mwperf.plan.where import SSH_OPTIONS, HostPair, CONTROL_CHARACTER, user_ssh_options

__all__ = ["LabHost", "Inventory", "read", "parse"]

_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
#: Inventory variables that change how ssh connects and that mwperf cannot honour: refused, naming them.
_UNSUPPORTED = ("ansible_password", "ansible_ssh_pass", "ansible_become_password", "ansible_ssh_executable")
INVENTORY_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class LabHost:
    """One host of the inventory, as mwperf reaches it over ssh."""

    name: str
    target: str  # user@host, or ssh://user@host:port
    data: str  # its data address (IPv4)
    options: tuple[str, ...]  # its ssh options (-i KEY, the common and extra args)
    nic: str | None = None


@dataclass(frozen=True)
class Inventory:
    path: Path
    hosts: dict[str, LabHost]  # in the inventory's order

    def pairs(self, spec: str) -> list[tuple[str, str]]:
        """``a:b,b:c`` or ``all``; UsageError naming the bad part."""
        names = list(self.hosts)
        if spec.strip() == "all":
            pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
            if not pairs:
                raise UsageError("--pairs", spec, f"{self.path} has {len(names)} host(s): a pair needs two")
            return pairs
        out: list[tuple[str, str]] = []
        for part in spec.split(","):
            a, sep, b = part.strip().partition(":")
            if not sep or not a or not b:
                raise UsageError("--pairs", spec, f"'{part.strip()}': expected PUB:SUB (two hosts of the inventory) "
                                                  f"or all")
            for name in (a, b):
                if name not in self.hosts:
                    raise UsageError("--pairs", spec, f"{name} is not a host of {self.path} "
                                                      f"(its hosts: {', '.join(names) or 'none'})")
            if a == b:
                raise UsageError("--pairs", spec, f"'{part.strip()}': a pair is two different hosts")
            if (a, b) not in out:
                out.append((a, b))
        return out

    def host_pair(self, pub: str, sub: str) -> HostPair:
        """The pair as ``--hosts`` takes it, named ``pub:sub`` (the records' ``host_pair``)."""
        a, b = self.hosts[pub], self.hosts[sub]
        user = user_ssh_options()
        options = SSH_OPTIONS + user + a.options + _flatten([o for o in _option_pairs(b.options)
                                                            if o not in _option_pairs(a.options)])
        nic = a.nic if a.nic == b.nic else None
        return HostPair(a.target, b.target, (a.data, b.data), nic, options, name=f"{pub}:{sub}")


def _option_pairs(options: tuple[str, ...]) -> list[tuple[str, ...]]:
    """ssh options grouped with their values (``-i KEY``), so that the second host's are added once."""
    out: list[tuple[str, ...]] = []
    items = list(options)
    while items:
        head = items.pop(0)
        if head in ("-i", "-o", "-F", "-J", "-l", "-p", "-c", "-m") and items:
            out.append((head, items.pop(0)))
        else:
            out.append((head,))
    return out


def _flatten(groups: list[tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(item for group in groups for item in group)


def read(path: str) -> Inventory:
    """The inventory at ``path`` as Ansible reads it; UsageError (``--inventory``) naming what is wrong."""
    file = Path(path)
    if not file.is_file():
        raise UsageError("--inventory", path, "no such file")
    ansible_inventory = tool("ansible-inventory", "--inventory", path)
    with Workspace() as ws:
        try:
            done = subprocess.run([ansible_inventory, "-i", str(file), "--list"], capture_output=True, text=True,
                                  timeout=INVENTORY_TIMEOUT_S, env=ws.env(ANSIBLE_INVENTORY_UNPARSED_FAILED="1",
                                                                          ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="1"),
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise UsageError("--inventory", path, f"ansible-inventory took over {INVENTORY_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        said = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise UsageError("--inventory", path, f"ansible-inventory: {said[-1] if said else f'exit {done.returncode}'}")
    try:
        listed = json.loads(done.stdout)
    except ValueError:
        raise UsageError("--inventory", path, "ansible-inventory gave no JSON") from None
    return parse(listed, file)


def _ordered(listed: dict, group: str, seen: dict[str, None]) -> None:
    node = listed.get(group) or {}
    for host in node.get("hosts", ()):
        seen.setdefault(host, None)
    for child in node.get("children", ()):
        if child != group:
            _ordered(listed, child, seen)


def parse(listed: dict, path: Path) -> Inventory:
    """``ansible-inventory --list``'s JSON as mwperf's hosts."""
    order: dict[str, None] = {}
    _ordered(listed, "all", order)
    hostvars = (listed.get("_meta") or {}).get("hostvars") or {}
    for name in hostvars:
        order.setdefault(name, None)
    if not order:
        raise UsageError("--inventory", str(path), "no hosts in it")
    return Inventory(path, {name: _host(name, hostvars.get(name) or {}, path) for name in order})


def _text(name: str, key: str, value: object, path: Path) -> str | None:
    if value is None:
        return None
    text = str(value)
    if CONTROL_CHARACTER.search(text):
        raise UsageError("--inventory", str(path), f"host {name}: {key} holds a control character (a newline, a "
                                                   f"tab, an escape): refused before anything runs on a host")
    if "{{" in text or "{%" in text:
        raise UsageError("--inventory", str(path), f"host {name}: {key} is a template ({text}): mwperf reads the "
                                                   f"inventory's values as written")
    return text


def _host(name: str, hv: dict, path: Path) -> LabHost:
    if not _NAME.match(name):
        raise UsageError("--inventory", str(path), f"host name '{name}': letters, digits, '.', '_' and '-' only")
    conn = hv.get("ansible_connection")
    if conn not in (None, "ssh", "ansible.builtin.ssh"):
        raise UsageError("--inventory", str(path), f"host {name}: ansible_connection {conn}: mwperf reaches hosts "
                                                   f"over ssh only")
    for key in _UNSUPPORTED:
        if key in hv:
            raise UsageError("--inventory", str(path), f"host {name}: {key}: mwperf logs in with keys only "
                                                       f"(ssh BatchMode); use ansible_ssh_private_key_file or an agent")
    def get(key: str) -> str | None:
        return _text(name, key, hv.get(key), path)

    address = get("ansible_host") or name
    user, port = get("ansible_user"), get("ansible_port")
    if port is not None and (not port.isdigit() or not 0 < int(port) < 65536):
        raise UsageError("--inventory", str(path), f"host {name}: ansible_port {port} is not a port")
    if not re.match(r"^[A-Za-z0-9.:_-]+$", address) or address.startswith("-"):
        raise UsageError("--inventory", str(path), f"host {name}: ansible_host '{address}' is not a host name "
                                                   f"or address")
    if user is not None and not re.match(r"^[A-Za-z0-9._-]+$", user):
        raise UsageError("--inventory", str(path), f"host {name}: ansible_user '{user}' is not a user name")
    login = f"{user}@{address}" if user else address
    target = f"ssh://{login}:{port}" if port not in (None, "22") else login
    options: list[str] = []
    key_file = get("ansible_ssh_private_key_file") or get("ansible_private_key_file")
    if key_file:
        options += ["-i", os.path.expanduser(key_file)]
    for args in ("ansible_ssh_common_args", "ansible_ssh_extra_args"):
        text = get(args)
        if text:
            try:
                options += shlex.split(text)
            except ValueError as exc:
                raise UsageError("--inventory", str(path), f"host {name}: {args}: {exc}") from None
    data = get("mwperf_data") or _ipv4(name, address, path)
    try:
        ipaddress.IPv4Address(data)
    except ValueError:
        raise UsageError("--inventory", str(path), f"host {name}: mwperf_data '{data}' is not an IPv4 "
                                                   f"address") from None
    return LabHost(name, target, data, _flatten(_option_pairs(tuple(options))), get("mwperf_nic"))


def _ipv4(name: str, address: str, path: Path) -> str:
    """The host's data address: ``ansible_host`` when it is an IPv4 address, else what it resolves to here."""
    try:
        return str(ipaddress.IPv4Address(address))
    except ValueError:
        pass
    try:
        return str(socket.getaddrinfo(address, None, socket.AF_INET)[0][4][0])
    except (OSError, IndexError):
        raise UsageError("--inventory", str(path), f"host {name}: {address} does not resolve to an IPv4 address "
                                                   f"here; give it mwperf_data: IP") from None
