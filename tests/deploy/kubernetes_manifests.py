#!/usr/bin/python3
"""deploy/kubernetes/ read with a YAML parser (kubectl is not needed).

  kubernetes_manifests.py commands DEPLOY_DIR
      prints one line per container: WHERE<TAB>ARGS, ARGS being lathe's
      arguments shell-quoted (deploy_commands_test.sh checks each with
      `lathe --check-args`).
  kubernetes_manifests.py check DEPLOY_DIR
      checks what the manifests must get right (below), then that each
      check fails on a manifest broken on purpose (the negative controls);
      prints PASS or every problem found, exit 1.

What is checked: every document has apiVersion, kind and metadata.name;
the kustomization lists every manifest; containers run the image's entry
point (lathe) with serve or runner; a flag's file (--db, --token-file,
--tls-*) lies under one of the container's mounts, the database on the
StatefulSet's volume claim, a Secret's file under a key the README's
`kubectl create secret` command gives it; every Secret is created in the
README; the tuner's --listen port is a container port, the Service's
ports and selector reach it, runners --connect to the Service's name and
port; the StatefulSet has one replica; a GPU runner asks for
nvidia.com/gpu and runs on GPU nodes; a CPU runner's CPU and memory
requests equal its limits, in whole CPUs, and its -num-threads is its CPU
count; pods run as non-root, containers without privilege escalation, on a
read-only root file system.
"""
import copy
import os
import re
import shlex
import sys

import yaml

WORKLOADS = ("Deployment", "StatefulSet")
# Flags whose value is a file the container reads or writes.
FILE_FLAGS = ("--db", "--token-file", "--tls-cert", "--tls-key", "--tls-ca",
              "--tls-client-ca")


def load(kube_dir):
    """[(file name, document)] of every manifest, and the kustomization."""
    docs, kustomization = [], None
    for name in sorted(os.listdir(kube_dir)):
        if not name.endswith((".yaml", ".yml")):
            continue
        with open(os.path.join(kube_dir, name)) as f:
            for doc in yaml.safe_load_all(f):
                if doc is None:
                    continue
                if name == "kustomization.yaml":
                    kustomization = doc
                else:
                    docs.append((name, doc))
    return docs, kustomization


def containers(docs):
    """(where, workload document, pod spec, container) of every container."""
    for name, doc in docs:
        if doc.get("kind") not in WORKLOADS:
            continue
        pod = doc["spec"]["template"]["spec"]
        for c in pod.get("containers", []) + pod.get("initContainers", []):
            where = "%s: %s/%s/%s" % (name, doc["kind"], doc["metadata"].get("name"), c["name"])
            yield where, doc, pod, c


def lathe_args(c):
    """lathe's arguments: the image's entry point is lathe, args follow it."""
    command = c.get("command")
    if command not in (None, ["lathe"]):
        return None
    return [str(a) for a in c.get("args", [])]


def flag(args, name):
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return None


def readme_secrets(readme):
    """{secret name: set of keys} from the README's kubectl create secret."""
    secrets = {}
    text = re.sub(r"\\\n\s*", " ", readme)
    for line in text.splitlines():
        m = re.search(r"kubectl\s.*?\bcreate\s+secret\s+(\S+)\s+(\S+)(.*)", line)
        if not m:
            continue
        kind, name, rest = m.group(1), m.group(2), m.group(3)
        keys = set()
        if kind == "tls":
            keys = {"tls.crt", "tls.key"}
        for f in re.findall(r"--from-file=(\S+)", rest):
            keys.add(f.split("=", 1)[0] if "=" in f else os.path.basename(f))
        for f in re.findall(r"--from-literal=([^=\s]+)=", rest):
            keys.add(f)
        secrets[name] = keys
    return secrets


def mount_for(doc, c, pod, path):
    """(mount, volume) the path lies under (the longest mount path), or None;
    the volume of a StatefulSet's claim template is {"claim": name}."""
    best = None
    for m in c.get("volumeMounts", []):
        mp = m["mountPath"].rstrip("/")
        if path == mp or path.startswith(mp + "/"):
            if best is None or len(mp) > len(best["mountPath"].rstrip("/")):
                best = m
    if best is None:
        return None
    volume = next((v for v in pod.get("volumes", []) if v["name"] == best["name"]), None)
    if volume is None:
        for t in doc["spec"].get("volumeClaimTemplates", []):
            if t["metadata"]["name"] == best["name"]:
                volume = {"claim": best["name"]}
    return best, volume


def check(docs, kustomization, files, readme):
    errors = []
    err = errors.append
    for name, doc in docs:
        for field in ("apiVersion", "kind"):
            if not doc.get(field):
                err("%s: a document without %s" % (name, field))
        if not (doc.get("metadata") or {}).get("name"):
            err("%s: a %s without metadata.name" % (name, doc.get("kind")))
    if kustomization is None:
        err("no kustomization.yaml")
    else:
        listed = kustomization.get("resources", [])
        for f in files:
            if f not in listed:
                err("kustomization.yaml does not list %s" % f)
        for f in listed:
            if f not in files:
                err("kustomization.yaml lists %s, which is not there" % f)
    secrets = readme_secrets(readme)
    services = [d for _, d in docs if d.get("kind") == "Service"]
    statefulsets = [d for _, d in docs if d.get("kind") == "StatefulSet"]
    if not statefulsets:
        err("no StatefulSet for the tuner")
    for s in statefulsets:
        if s["spec"].get("replicas") != 1:
            err("StatefulSet %s: replicas %s, want 1 (one writer per database)" %
                (s["metadata"]["name"], s["spec"].get("replicas")))
        if s["spec"].get("serviceName") not in [v["metadata"]["name"] for v in services]:
            err("StatefulSet %s: serviceName names no Service" % s["metadata"]["name"])

    tuner_addresses = set()
    runners = []
    for where, doc, pod, c in containers(docs):
        args = lathe_args(c)
        if args is None:
            err("%s: runs %s, not the image's lathe" % (where, c.get("command")))
            continue
        role = args[0] if args else None
        if role not in ("serve", "runner"):
            err("%s: lathe %s, want serve or runner" % (where, role))
            continue
        # Files named by flags: under a mount, a Secret's under one of its keys.
        for fl in FILE_FLAGS:
            path = flag(args, fl)
            if path is None:
                continue
            found = mount_for(doc, c, pod, path)
            if found is None or found[1] is None:
                err("%s: %s %s is on no mounted volume" % (where, fl, path))
                continue
            mount, volume = found
            rel = os.path.relpath(path, mount["mountPath"])
            if "secret" in volume:
                sname = volume["secret"]["secretName"]
                if sname not in secrets:
                    err("%s: Secret %s (for %s) is not created in deploy/README.md" %
                        (where, sname, fl))
                elif rel not in secrets[sname]:
                    err("%s: %s %s: Secret %s has no key %s (README: %s)" %
                        (where, fl, path, sname, rel, sorted(secrets[sname])))
            if fl == "--db":
                if doc["kind"] != "StatefulSet" or "claim" not in volume:
                    err("%s: --db %s is not on the StatefulSet's volume claim" % (where, path))
                elif mount.get("readOnly"):
                    err("%s: the database volume is mounted read-only" % where)
        for v in pod.get("volumes", []):
            if "secret" in v and v["secret"]["secretName"] not in secrets:
                err("%s: Secret %s is not created in deploy/README.md" %
                    (where, v["secret"]["secretName"]))
        # Who runs it, and how.
        psc = pod.get("securityContext", {})
        csc = c.get("securityContext", {})
        if not (psc.get("runAsNonRoot") or csc.get("runAsNonRoot")):
            err("%s: not runAsNonRoot" % where)
        if csc.get("allowPrivilegeEscalation") is not False:
            err("%s: allowPrivilegeEscalation is not false" % where)
        if csc.get("readOnlyRootFilesystem") is not True:
            err("%s: the root file system is writable" % where)
        if csc.get("privileged") or (csc.get("capabilities") or {}).get("add"):
            err("%s: privileged or with added capabilities" % where)
        res = c.get("resources", {})
        requests, limits = res.get("requests", {}), res.get("limits", {})
        ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
        if role == "serve":
            listen = flag(args, "--listen") or ""
            port = int(listen.rsplit(":", 1)[1]) if ":" in listen else None
            if port not in ports.values():
                err("%s: --listen %s: port %s is not a container port %s" %
                    (where, listen, port, sorted(ports.values())))
            labels = doc["spec"]["template"]["metadata"].get("labels", {})
            reached = False
            for s in services:
                sel = s["spec"].get("selector", {})
                if not sel or any(labels.get(k) != v for k, v in sel.items()):
                    continue
                for sp in s["spec"].get("ports", []):
                    target = sp.get("targetPort", sp["port"])
                    target = ports.get(target) if isinstance(target, str) else target
                    if target is None:
                        err("Service %s: port %s targets no port of %s" %
                            (s["metadata"]["name"], sp.get("name"), where))
                    elif target == port:
                        reached = True
                        tuner_addresses.add("%s:%d" % (s["metadata"]["name"], sp["port"]))
            if not reached:
                err("%s: no Service reaches --listen's port %s" % (where, port))
            metrics = flag(args, "--metrics-listen")
            if metrics is not None:
                mport = int(metrics.rsplit(":", 1)[1]) if ":" in metrics else None
                if ports.get("metrics") != mport:
                    err("%s: --metrics-listen %s: port %s is not the container "
                        "port named metrics %s" % (where, metrics, mport,
                                                   ports.get("metrics")))
        else:
            runners.append((where, doc, pod, c, args, requests, limits))

    for where, doc, pod, c, args, requests, limits in runners:
        connect = flag(args, "--connect")
        if connect not in tuner_addresses:
            err("%s: --connect %s is not the tuner's Service %s" %
                (where, connect, sorted(tuner_addresses)))
        target = flag(args, "--target") or "host"
        if target.split()[0] == "cuda":
            if str(limits.get("nvidia.com/gpu")) != "1":
                err("%s: a cuda runner without nvidia.com/gpu: 1 in its limits" % where)
            if not pod.get("nodeSelector") and not pod.get("affinity"):
                err("%s: a cuda runner without a node selector for GPU nodes" % where)
            if not any(t.get("key") == "nvidia.com/gpu" for t in pod.get("tolerations", [])):
                err("%s: a cuda runner that does not tolerate GPU nodes' taint" % where)
        else:
            if "nvidia.com/gpu" in limits:
                err("%s: a CPU runner holds a GPU" % where)
            for r in ("cpu", "memory"):
                if r not in requests or str(requests.get(r)) != str(limits.get(r)):
                    err("%s: %s request %s != limit %s (timings would be throttled)" %
                        (where, r, requests.get(r), limits.get(r)))
            cpu = str(limits.get("cpu", ""))
            if not cpu.isdigit():
                err("%s: cpu %r is not a whole number of CPUs" % (where, cpu))
            m = re.search(r"-num-threads=(\d+)", target)
            if m is None:
                err("%s: --target %r does not fix its thread count" % (where, target))
            elif cpu.isdigit() and m.group(1) != cpu:
                err("%s: -num-threads=%s but %s CPUs" % (where, m.group(1), cpu))
    if not runners:
        err("no runner")
    return errors


def negative_controls(docs, kustomization, files, readme):
    """Each check must catch a manifest broken on purpose."""
    def container(d):
        return d["spec"]["template"]["spec"]["containers"][0]

    def set_flag(c, name, value):
        c["args"][c["args"].index(name) + 1] = value

    mutations = [
        ("metadata.name", lambda d: d[0][1]["metadata"].pop("name")),
        ("replicas", lambda d: d_find(d, "StatefulSet", "")["spec"].update(replicas=2)),
        ("volume claim", lambda d: set_flag(container(d_find(d, "StatefulSet", "")), "--db",
                                            "/tmp/lathe.db")),
        ("has no key", lambda d: set_flag(container(d_find(d, "StatefulSet", "")),
                                          "--tls-key", "/etc/lathe/tls/server.key")),
        ("is not created", lambda d: d_find(d, "Deployment", "cpu")["spec"]["template"]["spec"]
         ["volumes"][1]["secret"].update(secretName="lathe-ca-typo")),
        ("container port", lambda d: set_flag(container(d_find(d, "StatefulSet", "")),
                                              "--listen", "0.0.0.0:7771")),
        ("container port named metrics", lambda d: set_flag(
            container(d_find(d, "StatefulSet", "")), "--metrics-listen", "0.0.0.0:9101")),
        ("not the tuner's Service", lambda d: set_flag(container(d_find(d, "Deployment", "cpu")),
                                                       "--connect", "lathe-tuner:7771")),
        ("nvidia.com/gpu", lambda d: container(d_find(d, "Deployment", "gpu"))["resources"]
         ["limits"].pop("nvidia.com/gpu")),
        ("request", lambda d: container(d_find(d, "Deployment", "cpu"))["resources"]
         ["limits"].update(cpu="4")),
        ("-num-threads", lambda d: set_flag(container(d_find(d, "Deployment", "cpu")),
                                            "--target", "host -num-threads=3")),
        ("root file system", lambda d: container(d_find(d, "Deployment", "gpu"))
         ["securityContext"].update(readOnlyRootFilesystem=False)),
    ]
    problems = []
    for expected, mutate in mutations:
        broken = copy.deepcopy(docs)
        mutate(broken)
        errors = check(broken, kustomization, files, readme)
        if not any(expected in e for e in errors):
            problems.append("negative control %r not caught (got %s)" % (expected, errors))
    errors = check(docs, kustomization, files[:-1] + ["missing.yaml"], readme)
    if not any("lists" in e for e in errors):
        problems.append("negative control: an unlisted manifest not caught")
    return problems


def d_find(docs, kind, name_part):
    for _, d in docs:
        if d.get("kind") == kind and name_part in d["metadata"].get("name", ""):
            return d
    raise SystemExit("negative controls: no %s *%s*" % (kind, name_part))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("commands", "check"):
        sys.exit("usage: kubernetes_manifests.py commands|check DEPLOY_DIR")
    deploy = sys.argv[2]
    kube = os.path.join(deploy, "kubernetes")
    docs, kustomization = load(kube)
    if sys.argv[1] == "commands":
        for where, _, _, c in containers(docs):
            args = lathe_args(c)
            if args is None:
                sys.exit("%s: runs %s, not the image's lathe" % (where, c.get("command")))
            print("%s\t%s" % (where, shlex.join(args)))
        return
    files = sorted(f for f in os.listdir(kube)
                   if f.endswith((".yaml", ".yml")) and f != "kustomization.yaml")
    with open(os.path.join(deploy, "README.md")) as f:
        readme = f.read()
    errors = check(docs, kustomization, files, readme)
    errors += negative_controls(docs, kustomization, files, readme)
    for e in errors:
        print("FAIL: " + e)
    if errors:
        sys.exit(1)
    print("PASS: %d documents in %d files, %d containers" %
          (len(docs), len(files), len(list(containers(docs)))))


if __name__ == "__main__":
    main()
