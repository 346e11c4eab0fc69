#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""kubernetes_manifests: the Kubernetes manifests (deploy/kubernetes), checked
without a cluster.

kubectl without a cluster can render a kustomization (`kubectl kustomize`)
and make objects from its generators (`kubectl create secret ...
--dry-run=client -o yaml`), but not validate objects: `apply` and `create
-f` in client dry-run mode still ask the API server for its resource types
and OpenAPI schema. So this renders both variants (deploy/kubernetes, with
CURVE, and deploy/kubernetes/insecure) with kubectl, makes the Secret that
docs/kubernetes.md tells to create, and checks every object here:

  - against a schema of the fields these objects use (types, enumerations,
    required fields, names and quantities in Kubernetes' formats; a field
    not in the schema, such as a misspelt one, is an error, as kubectl's
    own validation would say);
  - for what holds the objects together: the StatefulSet's serviceName is a
    headless Service; the Service's, the PodDisruptionBudget's and the
    NetworkPolicy's selectors match the pods' labels; every probe and
    Service port names a port of the container, which is the port lcpsimd's
    arguments bind; the resources are requested and fit lcpsimd's options
    (a core per --workers thread, --max-memory within the memory limit,
    --max-world-memory below where --max-memory starts shedding); the image
    is set, with a tag; the pod runs as the image's non-root user on a
    read-only root file system with a writable volume wherever the daemon
    and its entrypoint write; the CURVE key files the entrypoint is told of
    are keys of the Secret;
  - with lcpsimd (LCPSIMD): every option the manifests pass is one lcpsimd
    knows, and lcpsimd started with the manifests' arguments (on loopback
    ports) answers the probes' path on its HTTP port.

Then it breaks the rendered objects on purpose, one way at a time, and
fails unless each breakage is reported: a check that passes everything
checks nothing.

Usage: check_manifests.py [DEPLOY_DIR]; kubectl from KUBECTL or PATH
(exit 77, skipped, when there is none), lcpsimd from LCPSIMD (optional).
"""
import copy
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request

import yaml

SKIPPED = 77
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DEPLOY_DIR = os.path.join(HERE, "..", "..", "deploy", "kubernetes")

# The image's user and group (docker/Dockerfile: USER 10001:10001).
IMAGE_UID = 10001
# Where the image's entrypoint writes when it starts: its working directory
# and the health check's key (scripts/docker-entrypoint.sh, LCPSIM_HEALTH_KEY).
ENTRYPOINT_WRITES = ["/tmp"]
# The CURVE Secret docs/kubernetes.md tells to create, with the files it names.
SECRET_FILES = {"server.key": 'secret-key = "x"\n', "authorized_keys": "x controller\n"}

# ---- a schema of the fields the manifests use ----
#
# A schema is a type name ("str", "int", "bool", "quantity", "intorstr",
# "map" of strings, "any"), a dict of field -> schema (unknown fields are
# errors; a field name starting with "!" is required), a one-item list
# (a list of that), or a set (one of those strings).

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
PORT_NAME = re.compile(r"^(?=.*[a-z])[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")
LABEL_KEY = re.compile(r"^([a-z0-9.-]{1,253}/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")

PROTOCOLS = {"TCP", "UDP", "SCTP"}
OBJECT_META = {"!name": "str", "namespace": "str", "labels": "labels", "annotations": "map",
               "creationTimestamp": {None}}
LABEL_SELECTOR = {"matchLabels": "labels",
                  "matchExpressions": [{"!key": "str", "!operator": {"In", "NotIn", "Exists",
                                                                     "DoesNotExist"},
                                        "values": ["str"]}]}
PROBE = {"httpGet": {"path": "str", "!port": "intorstr", "scheme": {"HTTP", "HTTPS"},
                     "host": "str", "httpHeaders": [{"!name": "str", "!value": "str"}]},
         "exec": {"command": ["str"]},
         "tcpSocket": {"!port": "intorstr", "host": "str"},
         "initialDelaySeconds": "int", "periodSeconds": "int", "timeoutSeconds": "int",
         "failureThreshold": "int", "successThreshold": "int",
         "terminationGracePeriodSeconds": "int"}
CAPABILITIES = {"add": ["str"], "drop": ["str"]}
SECCOMP = {"!type": {"RuntimeDefault", "Localhost", "Unconfined"}, "localhostProfile": "str"}
CONTAINER = {
    "!name": "str", "image": "str", "imagePullPolicy": {"Always", "IfNotPresent", "Never"},
    "command": ["str"], "args": ["str"], "workingDir": "str",
    "env": [{"!name": "str", "value": "str", "valueFrom": "any"}],
    "ports": [{"name": "str", "!containerPort": "int", "protocol": PROTOCOLS,
               "hostPort": "int", "hostIP": "str"}],
    "startupProbe": PROBE, "readinessProbe": PROBE, "livenessProbe": PROBE,
    "resources": {"requests": "quantities", "limits": "quantities"},
    "securityContext": {"allowPrivilegeEscalation": "bool", "readOnlyRootFilesystem": "bool",
                        "runAsNonRoot": "bool", "runAsUser": "int", "runAsGroup": "int",
                        "privileged": "bool", "capabilities": CAPABILITIES,
                        "seccompProfile": SECCOMP},
    "volumeMounts": [{"!name": "str", "!mountPath": "str", "readOnly": "bool", "subPath": "str"}],
}
VOLUME = {
    "!name": "str",
    "emptyDir": {"medium": {"", "Memory"}, "sizeLimit": "quantity"},
    "secret": {"!secretName": "str", "defaultMode": "int", "optional": "bool",
               "items": [{"!key": "str", "!path": "str", "mode": "int"}]},
    "configMap": {"!name": "str", "defaultMode": "int", "optional": "bool",
                  "items": [{"!key": "str", "!path": "str", "mode": "int"}]},
}
POD_SPEC = {
    "!containers": [CONTAINER], "initContainers": [CONTAINER], "volumes": [VOLUME],
    "securityContext": {"runAsNonRoot": "bool", "runAsUser": "int", "runAsGroup": "int",
                        "fsGroup": "int", "fsGroupChangePolicy": {"OnRootMismatch", "Always"},
                        "supplementalGroups": ["int"], "seccompProfile": SECCOMP},
    "automountServiceAccountToken": "bool", "enableServiceLinks": "bool",
    "terminationGracePeriodSeconds": "int", "serviceAccountName": "str",
    "priorityClassName": "str", "nodeSelector": "map", "tolerations": ["any"], "affinity": "any",
    "topologySpreadConstraints": [{"!maxSkew": "int", "!topologyKey": "str",
                                   "!whenUnsatisfiable": {"DoNotSchedule", "ScheduleAnyway"},
                                   "labelSelector": LABEL_SELECTOR}],
}
SPECS = {
    ("v1", "Namespace"): None,
    ("v1", "Secret"): None,
    ("v1", "Service"): {
        "clusterIP": "str", "type": {"ClusterIP", "NodePort", "LoadBalancer", "ExternalName"},
        "selector": "labels", "publishNotReadyAddresses": "bool",
        "sessionAffinity": {"None", "ClientIP"},
        "!ports": [{"name": "str", "!port": "int", "targetPort": "intorstr",
                    "protocol": PROTOCOLS, "appProtocol": "str"}]},
    ("apps/v1", "StatefulSet"): {
        "!serviceName": "str", "replicas": "int",
        "podManagementPolicy": {"OrderedReady", "Parallel"},
        "updateStrategy": {"type": {"RollingUpdate", "OnDelete"},
                           "rollingUpdate": {"partition": "int", "maxUnavailable": "intorstr"}},
        "!selector": LABEL_SELECTOR,
        "!template": {"metadata": {"labels": "labels", "annotations": "map"}, "!spec": POD_SPEC},
        "minReadySeconds": "int", "revisionHistoryLimit": "int"},
    ("policy/v1", "PodDisruptionBudget"): {
        "maxUnavailable": "intorstr", "minAvailable": "intorstr", "!selector": LABEL_SELECTOR},
    ("networking.k8s.io/v1", "NetworkPolicy"): {
        "!podSelector": LABEL_SELECTOR, "policyTypes": [{"Ingress", "Egress"}],
        "ingress": [{"from": [{"podSelector": LABEL_SELECTOR,
                               "namespaceSelector": LABEL_SELECTOR, "ipBlock": "any"}],
                     "ports": [{"port": "intorstr", "protocol": PROTOCOLS, "endPort": "int"}]}]},
}


def check_schema(value, schema, where, errors):
    if schema == "any":
        return
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            errors.append(f"{where}: an object expected, not {type(value).__name__}")
            return
        fields = {k.lstrip("!"): s for k, s in schema.items()}
        for key in schema:
            if key.startswith("!") and key[1:] not in value:
                errors.append(f"{where}: required field {key[1:]} missing")
        for key, item in value.items():
            if key not in fields:
                errors.append(f"{where}: unknown field {key}")
            else:
                check_schema(item, fields[key], f"{where}.{key}", errors)
    elif isinstance(schema, list):
        if not isinstance(value, list):
            errors.append(f"{where}: a list expected")
            return
        for i, item in enumerate(value):
            check_schema(item, schema[0], f"{where}[{i}]", errors)
    elif isinstance(schema, set):
        if value not in schema:
            errors.append(f"{where}: {value!r} is not one of {sorted(schema)}")
    elif schema == "str":
        if not isinstance(value, str):
            errors.append(f"{where}: a string expected, not {value!r}")
    elif schema == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            errors.append(f"{where}: an integer expected, not {value!r}")
    elif schema == "bool":
        if not isinstance(value, bool):
            errors.append(f"{where}: true or false expected, not {value!r}")
    elif schema == "intorstr":
        if not isinstance(value, (int, str)) or isinstance(value, bool):
            errors.append(f"{where}: an integer or a string expected, not {value!r}")
    elif schema == "quantity":
        if not (isinstance(value, int) and not isinstance(value, bool)) and not (
                isinstance(value, str) and QUANTITY.match(value)):
            errors.append(f"{where}: {value!r} is not a quantity")
    elif schema == "quantities":
        if not isinstance(value, dict):
            errors.append(f"{where}: an object expected")
            return
        for key, item in value.items():
            if key not in ("cpu", "memory", "ephemeral-storage"):
                errors.append(f"{where}: unknown resource {key}")
            check_schema(item, "quantity", f"{where}.{key}", errors)
    elif schema in ("map", "labels"):
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            errors.append(f"{where}: a map of strings to strings expected")
            return
        if schema == "labels":
            for key, item in value.items():
                if not LABEL_KEY.match(key) or not LABEL_VALUE.match(item):
                    errors.append(f"{where}: {key}: {item!r} is not a valid label")
    else:
        raise AssertionError(f"unknown schema {schema!r}")


def check_object(obj, errors):
    """The object's own shape: apiVersion, kind, metadata, spec."""
    where = f"{obj.get('kind', '?')}/{(obj.get('metadata') or {}).get('name', '?')}"
    key = (obj.get("apiVersion"), obj.get("kind"))
    if key not in SPECS:
        errors.append(f"{where}: unexpected apiVersion/kind {key[0]}/{key[1]}")
        return
    top = {"!apiVersion": "str", "!kind": "str", "!metadata": OBJECT_META}
    if key == ("v1", "Secret"):
        top.update({"type": "str", "data": "map", "stringData": "map"})
    elif SPECS[key] is not None:
        top["!spec"] = SPECS[key]
    check_schema(obj, top, where, errors)
    name = (obj.get("metadata") or {}).get("name", "")
    if isinstance(name, str) and not (DNS_LABEL.match(name) and len(name) <= 63):
        errors.append(f"{where}: the name is not a DNS label")


# ---- what holds the objects together ----

def quantity_value(text):
    """A quantity in its base unit (cores, bytes)."""
    m = QUANTITY.match(str(text))
    if not m:
        return None
    suffix = m.group(2) or ""
    number = float(str(text)[:len(str(text)) - len(suffix)])
    scale = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
             "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}[suffix]
    return number * scale


def options_of(args):
    """lcpsimd's options in a container's args: {"--name": value or True}."""
    options, i = {}, 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--") and "=" in arg:
            name, value = arg.split("=", 1)
            options[name] = value
        elif arg.startswith("--") and i + 1 < len(args) and not args[i + 1].startswith("--"):
            options[arg] = args[i + 1]
            i += 1
        elif arg.startswith("--"):
            options[arg] = True
        i += 1
    return options


def port_of_endpoint(text):
    """The port of tcp://HOST:PORT or HOST:PORT, as an int (None if not)."""
    m = re.match(r"^(tcp://)?[^:]+:([0-9]+)$", str(text))
    return int(m.group(2)) if m else None


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def resolve_port(port, container):
    """A probe's or Service's port (number or name) as a container port number."""
    for p in container.get("ports") or []:
        if port == p.get("name") or port == p.get("containerPort"):
            return p.get("containerPort")
    return None


def check_together(objects, variant, errors):
    by_kind = {}
    for obj in objects:
        by_kind.setdefault(obj.get("kind"), []).append(obj)
    namespaces = {o["metadata"]["name"] for o in by_kind.get("Namespace", [])}
    for obj in objects:
        if obj.get("kind") == "Namespace":
            continue
        ns = obj.get("metadata", {}).get("namespace")
        if ns not in namespaces:
            errors.append(f"{obj.get('kind')}/{obj['metadata'].get('name')}: namespace {ns!r} "
                          "is not one of the manifests' namespaces")
    sets = by_kind.get("StatefulSet", [])
    if len(sets) != 1:
        errors.append(f"one StatefulSet expected, found {len(sets)}")
        return
    sts = sets[0]
    spec = sts.get("spec", {})
    template = spec.get("template", {})
    pod_labels = (template.get("metadata") or {}).get("labels") or {}
    pod = template.get("spec") or {}
    containers = pod.get("containers") or []
    c = next((x for x in containers if x.get("name") == "lcpsimd"), None)
    if c is None:
        errors.append("StatefulSet: no container named lcpsimd")
        return

    # Selectors.
    if not selects((spec.get("selector") or {}).get("matchLabels"), pod_labels):
        errors.append("StatefulSet: spec.selector does not match the pod template's labels")
    services = {s["metadata"]["name"]: s for s in by_kind.get("Service", [])}
    service = services.get(spec.get("serviceName"))
    if service is None:
        errors.append(f"StatefulSet: serviceName {spec.get('serviceName')!r} is not a Service "
                      "of the manifests")
    else:
        sspec = service.get("spec", {})
        if sspec.get("clusterIP") != "None":
            errors.append("Service: the StatefulSet's Service must be headless (clusterIP: None) "
                          "so that its name resolves to every pod")
        if not selects(sspec.get("selector"), pod_labels):
            errors.append("Service: its selector does not match the pods' labels")
        if sspec.get("publishNotReadyAddresses"):
            errors.append("Service: publishNotReadyAddresses would hand pods that are not "
                          "ready to the clients")
        names = {}
        for p in sspec.get("ports") or []:
            target = resolve_port(p.get("targetPort", p.get("port")), c)
            if target is None:
                errors.append(f"Service: port {p.get('name')} targets "
                              f"{p.get('targetPort')!r}, not a port of the container")
            names[p.get("name")] = (p.get("port"), target)
        for name in ("requests", "stream", "http"):
            if name not in names:
                errors.append(f"Service: no port named {name}")
    for pdb in by_kind.get("PodDisruptionBudget", []):
        pspec = pdb.get("spec", {})
        if not selects((pspec.get("selector") or {}).get("matchLabels"), pod_labels):
            errors.append("PodDisruptionBudget: its selector does not match the pods' labels")
        if ("maxUnavailable" in pspec) == ("minAvailable" in pspec):
            errors.append("PodDisruptionBudget: exactly one of maxUnavailable and minAvailable")
        elif pspec.get("maxUnavailable") in (0, "0%") or (
                isinstance(pspec.get("minAvailable"), int)
                and pspec["minAvailable"] >= spec.get("replicas", 1)):
            errors.append("PodDisruptionBudget: allows no disruption, so a node drain never ends")
    if not by_kind.get("PodDisruptionBudget"):
        errors.append("no PodDisruptionBudget")
    for policy in by_kind.get("NetworkPolicy", []):
        pspec = policy.get("spec", {})
        if not selects((pspec.get("podSelector") or {}).get("matchLabels"), pod_labels):
            errors.append("NetworkPolicy: its podSelector does not match the pods' labels")
        for rule in pspec.get("ingress") or []:
            for p in rule.get("ports") or []:
                if resolve_port(p.get("port"), c) is None:
                    errors.append(f"NetworkPolicy: port {p.get('port')!r} is not a port of the "
                                  "container")

    # Port names: IANA service names, at most 15 characters (Kubernetes
    # refuses others).
    for p in (c.get("ports") or []) + ((service or {}).get("spec", {}).get("ports") or []):
        name = p.get("name", "")
        if not (PORT_NAME.match(name) and len(name) <= 15):
            errors.append(f"port name {name!r}: at most 15 lower-case letters, digits and '-'")

    # lcpsimd's arguments, the ports and the probes.
    options = options_of(c.get("args") or [])
    bound = {"requests": port_of_endpoint(options.get("--bind", "")),
             "stream": port_of_endpoint(options.get("--pub", "")),
             "http": port_of_endpoint(options.get("--http", ""))}
    for name, port in bound.items():
        if port is None:
            errors.append(f"lcpsimd: no {name} endpoint (--bind, --pub, --http HOST:PORT)")
        elif resolve_port(name, c) != port:
            errors.append(f"lcpsimd: its {name} port {port} is not the container port named "
                          f"{name} ({resolve_port(name, c)})")
    for which in ("--bind", "--pub", "--http"):
        host = str(options.get(which, "")).replace("tcp://", "").split(":")[0]
        if host in ("127.0.0.1", "localhost"):
            errors.append(f"lcpsimd: {which} on the loopback is out of the pod's reach")
    for probe_name in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = c.get(probe_name)
        if not probe:
            errors.append(f"lcpsimd: no {probe_name}")
            continue
        get = probe.get("httpGet")
        if not get or get.get("path") != "/healthz":
            errors.append(f"lcpsimd: {probe_name} must be an httpGet of /healthz")
            continue
        port = resolve_port(get.get("port"), c)
        if port is None or port != bound["http"]:
            errors.append(f"lcpsimd: {probe_name} asks port {get.get('port')!r}, which is not "
                          f"lcpsimd's HTTP port ({bound['http']})")
        period, timeout = probe.get("periodSeconds", 10), probe.get("timeoutSeconds", 1)
        if timeout > period:
            errors.append(f"lcpsimd: {probe_name}: timeoutSeconds above periodSeconds")
    startup = c.get("startupProbe") or {}
    window = startup.get("periodSeconds", 10) * startup.get("failureThreshold", 3)
    if not 10 <= window <= 300:
        errors.append(f"lcpsimd: the startup probe gives {window} s to start: 10 to 300 s "
                      "expected")
    liveness = c.get("livenessProbe") or {}
    if liveness.get("failureThreshold", 3) * liveness.get("periodSeconds", 10) < 15:
        errors.append("lcpsimd: the liveness probe restarts a pod within 15 s of a stall; a "
                      "long BatchStep on a loaded node would be killed")

    # Resources against lcpsimd's options.
    resources = c.get("resources") or {}
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    for kind in ("cpu", "memory"):
        if kind not in requests:
            errors.append(f"lcpsimd: no {kind} request")
        if kind not in limits:
            errors.append(f"lcpsimd: no {kind} limit")
    for kind in requests:
        if kind in limits and (quantity_value(requests[kind]) or 0) > (
                quantity_value(limits[kind]) or 0):
            errors.append(f"lcpsimd: the {kind} request is above its limit")
    workers = options.get("--workers")
    if workers is None:
        errors.append("lcpsimd: no --workers (BatchStep's threads)")
    elif "cpu" in requests and quantity_value(requests["cpu"]) != float(workers):
        errors.append(f"lcpsimd: --workers {workers} and a cpu request of {requests['cpu']}: "
                      "one core per worker thread expected")
    max_memory = options.get("--max-memory")
    memory_limit = quantity_value(limits.get("memory", "0")) or 0
    if max_memory is None:
        errors.append("lcpsimd: no --max-memory (the daemon's own memory watch)")
    else:
        if float(max_memory) * 2**20 > memory_limit:
            errors.append(f"lcpsimd: --max-memory {max_memory} MiB is above the memory limit "
                          f"({limits.get('memory')}): the kernel would kill the pod before the "
                          "daemon sheds load")
        world_bytes = options.get("--max-world-memory")
        if world_bytes is None:
            errors.append("lcpsimd: no --max-world-memory")
        elif float(world_bytes) >= 0.75 * float(max_memory) * 2**20:
            errors.append(f"lcpsimd: --max-world-memory {world_bytes} is not below 3/4 of "
                          "--max-memory, where the daemon starts closing connections")
    if "--max-worlds" not in options:
        errors.append("lcpsimd: no --max-worlds")

    # The image.
    image = c.get("image") or ""
    if not image:
        errors.append("lcpsimd: no image")
    elif "@sha256:" not in image and (":" not in image.rsplit("/", 1)[-1]
                                      or image.endswith(":latest")):
        errors.append(f"lcpsimd: image {image!r} has no tag (or :latest): pods of one set "
                      "could run different images")

    # Security: non-root, read-only root, writable volumes where it writes.
    pod_sc, c_sc = pod.get("securityContext") or {}, c.get("securityContext") or {}
    if not (pod_sc.get("runAsNonRoot") or c_sc.get("runAsNonRoot")):
        errors.append("lcpsimd: runAsNonRoot not set")
    if c_sc.get("runAsUser", pod_sc.get("runAsUser")) != IMAGE_UID:
        errors.append(f"lcpsimd: not run as the image's user {IMAGE_UID}")
    if c_sc.get("readOnlyRootFilesystem") is not True:
        errors.append("lcpsimd: readOnlyRootFilesystem not set")
    if c_sc.get("allowPrivilegeEscalation") is not False:
        errors.append("lcpsimd: allowPrivilegeEscalation not false")
    if "ALL" not in ((c_sc.get("capabilities") or {}).get("drop") or []):
        errors.append("lcpsimd: capabilities not all dropped")
    seccomp = (c_sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")
    if seccomp not in ("RuntimeDefault", "Localhost"):
        errors.append("lcpsimd: no seccomp profile (the restricted Pod Security Standard)")
    volumes = {v.get("name"): v for v in pod.get("volumes") or []}
    mounts = {m.get("mountPath"): m for m in c.get("volumeMounts") or []}
    for m in mounts.values():
        if m.get("name") not in volumes:
            errors.append(f"lcpsimd: mount {m.get('mountPath')} names no volume "
                          f"({m.get('name')!r})")
    for name in volumes:
        if not any(m.get("name") == name for m in mounts.values()):
            errors.append(f"volume {name} is mounted nowhere")
    writes = list(ENTRYPOINT_WRITES)
    if "--record-dir" in options:
        writes.append(options["--record-dir"])
    for path in writes:
        m = mounts.get(path)
        volume = volumes.get(m.get("name")) if m else None
        if not volume or "emptyDir" not in volume or m.get("readOnly"):
            errors.append(f"lcpsimd: {path} is written to but is no writable emptyDir mount")
        elif "sizeLimit" not in (volume.get("emptyDir") or {}):
            errors.append(f"lcpsimd: the emptyDir at {path} has no sizeLimit")

    # Authentication.
    env = {e.get("name"): e.get("value") for e in c.get("env") or []}
    secrets = {s["metadata"]["name"]: s for s in by_kind.get("Secret", [])}
    if variant == "curve":
        if env.get("LCPSIM_INSECURE") not in (None, "0"):
            errors.append("curve: LCPSIM_INSECURE is set")
        for var in ("LCPSIM_SERVER_KEY", "LCPSIM_AUTHORIZED_KEYS"):
            path = env.get(var)
            if not path:
                errors.append(f"curve: {var} not set")
                continue
            directory, file = os.path.split(path)
            m = mounts.get(directory)
            secret_volume = (volumes.get(m.get("name")) or {}).get("secret") if m else None
            if not secret_volume:
                errors.append(f"curve: {var}={path} is not in a mounted Secret")
                continue
            if not m.get("readOnly"):
                errors.append(f"curve: the Secret at {directory} is not mounted read-only")
            items = {i.get("path"): i.get("key") for i in secret_volume.get("items") or []}
            key = items.get(file, file if not secret_volume.get("items") else None)
            secret = secrets.get(secret_volume.get("secretName"))
            if secret is None:
                errors.append(f"curve: Secret {secret_volume.get('secretName')!r} is not the "
                              "one docs/kubernetes.md makes")
            elif key not in (secret.get("data") or {}):
                errors.append(f"curve: {var}={path} is key {key!r}, which the Secret does not "
                              "have")
            if secret_volume.get("defaultMode", 0o644) & 0o007:
                errors.append("curve: the key files are readable by others")
    else:
        if env.get("LCPSIM_INSECURE") != "1":
            errors.append("insecure: LCPSIM_INSECURE is not 1")
        if any("secret" in v for v in volumes.values()):
            errors.append("insecure: a Secret is still mounted")
        if not by_kind.get("NetworkPolicy"):
            errors.append("insecure: no NetworkPolicy limits who reaches the pods")


def check(objects, variant):
    errors = []
    for obj in objects:
        check_object(obj, errors)
    if not errors:
        check_together(objects, variant, errors)
    return errors


# ---- lcpsimd itself ----

def check_with_lcpsimd(lcpsimd, objects):
    """The options are lcpsimd's, and lcpsimd started with them serves /healthz."""
    errors = []
    c = next(o for o in objects if o["kind"] == "StatefulSet")["spec"]["template"]["spec"][
        "containers"][0]
    args = list(c.get("args") or [])
    help_text = subprocess.run([lcpsimd, "--help"], capture_output=True, text=True,
                               timeout=30).stdout
    known = set(re.findall(r"^\s+(--[a-z][a-z0-9-]*)", help_text, re.MULTILINE))
    for name in options_of(args):
        if name not in known:
            errors.append(f"lcpsimd does not know the option {name}")
    if errors:
        return errors
    health = next(p for p in ("startupProbe", "readinessProbe", "livenessProbe")
                  if c.get(p))
    path = c[health]["httpGet"]["path"]
    with tempfile.TemporaryDirectory(prefix="lcpsim-k8s-") as tmp:
        # The pod's addresses and directories, made local.
        replace = {"--bind": "tcp://127.0.0.1:0", "--pub": "tcp://127.0.0.1:0",
                   "--http": "127.0.0.1:0", "--record-dir": tmp}
        local, i = [], 0
        while i < len(args):
            local.append(args[i])
            if args[i] in replace:
                local.append(replace[args[i]])
                i += 1
            i += 1
        proc = subprocess.Popen([lcpsimd, "--log-level", "warning"] + local,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            m = re.search(r" http=(http://\S+)", line)
            if not line.startswith("lcpsimd listening") or not m:
                errors.append(f"lcpsimd with the manifests' arguments did not start: {line!r} "
                              f"{proc.stderr.read() if proc.poll() is not None else ''}")
                return errors
            with urllib.request.urlopen(m.group(1).rstrip("/") + path, timeout=10) as reply:
                if reply.status != 200:
                    errors.append(f"{path}: HTTP {reply.status}")
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return errors


# ---- breakages each check must report ----

def statefulset(objs):
    return next(o for o in objs if o["kind"] == "StatefulSet")


def container(objs):
    return statefulset(objs)["spec"]["template"]["spec"]["containers"][0]


def service(objs):
    return next(o for o in objs if o["kind"] == "Service")


def set_arg(objs, name, value):
    args = container(objs)["args"]
    args[args.index(name) + 1] = value


BREAKAGES = [
    ("a misspelt field (readinesProbe)",
     lambda o: container(o).__setitem__("readinesProbe", container(o).pop("readinessProbe"))),
    ("the readiness probe on a port the container does not have",
     lambda o: container(o)["readinessProbe"]["httpGet"].__setitem__("port", 9090)),
    ("the liveness probe on the requests port",
     lambda o: container(o)["livenessProbe"]["httpGet"].__setitem__("port", "requests")),
    ("the startup probe removed", lambda o: container(o).pop("startupProbe")),
    ("the probes' path not /healthz",
     lambda o: container(o)["readinessProbe"]["httpGet"].__setitem__("path", "/health")),
    ("the Service's selector misspelt",
     lambda o: service(o)["spec"]["selector"].__setitem__("app.kubernetes.io/name", "lcpsim")),
    ("the Service not headless",
     lambda o: service(o)["spec"].pop("clusterIP")),
    ("the Service targeting a port name the container lacks",
     lambda o: service(o)["spec"]["ports"][0].__setitem__("targetPort", "request")),
    ("the StatefulSet naming another Service",
     lambda o: statefulset(o)["spec"].__setitem__("serviceName", "lcpsim")),
    ("the pod labels no longer matching the StatefulSet's selector",
     lambda o: statefulset(o)["spec"]["template"]["metadata"]["labels"].pop(
         "app.kubernetes.io/component")),
    ("the resource requests removed", lambda o: container(o)["resources"].pop("requests")),
    ("a memory request that is not a quantity",
     lambda o: container(o)["resources"]["requests"].__setitem__("memory", "1 GB")),
    ("one core for two workers",
     lambda o: container(o)["resources"]["requests"].__setitem__("cpu", "1")),
    ("--max-memory above the memory limit", lambda o: set_arg(o, "--max-memory", "4096")),
    ("--max-world-memory past where --max-memory sheds",
     lambda o: set_arg(o, "--max-world-memory", "900000000")),
    ("--bind on another port than the container's",
     lambda o: set_arg(o, "--bind", "tcp://0.0.0.0:5557")),
    ("--http on the loopback only", lambda o: set_arg(o, "--http", "127.0.0.1:8080")),
    ("the image removed", lambda o: container(o).pop("image")),
    ("an image without a tag",
     lambda o: container(o).__setitem__("image", "registry.example.com/lcpsim/lcpsimd")),
    ("a writable root file system",
     lambda o: container(o)["securityContext"].__setitem__("readOnlyRootFilesystem", False)),
    ("running as root",
     lambda o: statefulset(o)["spec"]["template"]["spec"]["securityContext"].__setitem__(
         "runAsUser", 0)),
    ("/tmp not mounted", lambda o: container(o).__setitem__(
        "volumeMounts", [m for m in container(o)["volumeMounts"] if m["mountPath"] != "/tmp"])),
    ("a PodDisruptionBudget selecting nothing",
     lambda o: next(x for x in o if x["kind"] == "PodDisruptionBudget")["spec"]["selector"][
         "matchLabels"].__setitem__("app.kubernetes.io/name", "nothing")),
    ("a protocol in lower case",
     lambda o: container(o)["ports"][0].__setitem__("protocol", "tcp")),
    ("a port name longer than 15 characters",
     lambda o: service(o)["spec"]["ports"][1].__setitem__("name", "state-stream-port")),
]

CURVE_BREAKAGES = [
    ("LCPSIM_SERVER_KEY naming a key the Secret lacks",
     lambda o: next(e for e in container(o)["env"] if e["name"] == "LCPSIM_SERVER_KEY")
     .__setitem__("value", "/run/secrets/lcpsim/server.secret")),
    ("the key files readable by others",
     lambda o: next(v for v in statefulset(o)["spec"]["template"]["spec"]["volumes"]
                    if "secret" in v)["secret"].__setitem__("defaultMode", 0o444)),
]


INSECURE_BREAKAGES = [
    ("LCPSIM_INSECURE unset", lambda o: container(o).pop("env")),
    ("the NetworkPolicy admitting a port the container lacks",
     lambda o: next(x for x in o if x["kind"] == "NetworkPolicy")["spec"]["ingress"][0]["ports"][
         0].__setitem__("port", 5557)),
]


def run(cmd, env):
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"FAILED: {' '.join(cmd)}:\n{done.stderr}")
    return done.stdout


def main():
    deploy = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DEPLOY_DIR)
    kubectl = os.environ.get("KUBECTL") or shutil.which("kubectl")
    if not kubectl:
        print("kubernetes_manifests: SKIPPED: no kubectl (install-deps.sh installs Debian's "
              "kubernetes-client)")
        return SKIPPED
    lcpsimd = os.environ.get("LCPSIMD")
    failures = 0
    with tempfile.TemporaryDirectory(prefix="lcpsim-kubectl-") as home:
        # No cluster, and none reachable by mistake: a configuration naming a
        # closed port, in a home of its own.
        config = os.path.join(home, "config")
        with open(config, "w") as f:
            f.write("apiVersion: v1\nkind: Config\ncurrent-context: none\n"
                    "clusters: [{name: none, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                    "users: [{name: none, user: {token: none}}]\n"
                    "contexts: [{name: none, context: {cluster: none, user: none}}]\n")
        env = dict(os.environ, HOME=home, KUBECONFIG=config)
        print(run([kubectl, "version", "--client"], env).strip().splitlines()[0])
        rendered = {}
        for variant, path in (("curve", deploy), ("insecure", os.path.join(deploy, "insecure"))):
            objects = [o for o in yaml.safe_load_all(run([kubectl, "kustomize", path], env)) if o]
            if variant == "curve":
                sts = next((o for o in objects if o.get("kind") == "StatefulSet"), {})
                namespace = sts.get("metadata", {}).get("namespace", "default")
                files = []
                for name, text in SECRET_FILES.items():
                    files.append(os.path.join(home, name))
                    with open(files[-1], "w") as f:
                        f.write(text)
                secret = run([kubectl, "-n", namespace, "create", "secret", "generic",
                              "lcpsim-curve", "--dry-run=client", "-o", "yaml"]
                             + [f"--from-file={os.path.basename(p)}={p}" for p in files], env)
                objects.append(yaml.safe_load(secret))
            rendered[variant] = objects
            kinds = ", ".join(f"{o.get('kind')}/{o.get('metadata', {}).get('name')}"
                              for o in objects)
            errors = check(objects, variant)
            if lcpsimd and not errors:
                errors = check_with_lcpsimd(lcpsimd, objects)
            print(f"{variant}: {kinds}")
            for e in errors:
                print(f"  FAILED: {e}")
            failures += len(errors)
            print(f"{variant}: {'ok' if not errors else 'FAILED'}")
    if failures:
        # The breakages are made to manifests that pass; on others they say nothing.
        print(f"kubernetes_manifests: {failures} failures (the breakages not tried)")
        return 1
    for variant, breakages in (("curve", BREAKAGES + CURVE_BREAKAGES),
                               ("insecure", BREAKAGES[:4] + INSECURE_BREAKAGES)):
        clean = set(check(rendered[variant], variant))
        for what, breakage in breakages:
            broken = copy.deepcopy(rendered[variant])
            breakage(broken)
            found = [e for e in check(broken, variant) if e not in clean]
            if found:
                print(f"{variant}, broken ({what}): reported: {found[0]}")
            else:
                print(f"{variant}, broken ({what}): FAILED: not reported")
                failures += 1
    print(f"kubernetes_manifests: {'ok' if not failures else f'{failures} failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
