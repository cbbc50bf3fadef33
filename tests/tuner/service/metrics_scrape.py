#!/usr/bin/python3
"""A Prometheus scrape of `lathe serve --metrics-listen`, as a client sees it.

  metrics_scrape.py page URL DOCS
      GET URL; exits 1 unless the answer is 200 with the text format 0.0.4
      content type, every sample belongs to a family opened by its HELP and
      TYPE lines, histogram buckets are cumulative and end at +Inf (equal to
      _count), and every family is listed in DOCS (docs/service.md). Prints
      the samples, "SERIES VALUE" a line.
  metrics_scrape.py status METHOD URL
      Prints the HTTP status the request is answered with.
  metrics_scrape.py refused URL
      Exits 0 when nothing listens at URL's address any more.
"""
import http.client
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def fail(why):
    print(f"metrics_scrape: {why}", file=sys.stderr)
    sys.exit(1)


def page(url, docs_path):
    with urllib.request.urlopen(url, timeout=10) as answer:
        if answer.status != 200:
            fail(f"status {answer.status}")
        kind = answer.headers.get("Content-Type", "")
        if not kind.startswith("text/plain; version=0.0.4"):
            fail(f"content type {kind!r}")
        text = answer.read().decode("utf-8")
    with open(docs_path, encoding="utf-8") as f:
        docs = f.read()
    types, helped, samples = {}, set(), []
    buckets = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split(" ")[2])
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            if name not in helped:
                fail(f"{name}: TYPE without HELP before it")
            types[name] = kind
            continue
        match = SAMPLE.match(line)
        if not match:
            fail(f"not a sample line: {line!r}")
        name, labels, value = match.group(1), match.group(2) or "", match.group(3)
        family = name
        for suffix in ("_bucket", "_sum", "_count"):
            base = name[: -len(suffix)]
            if name.endswith(suffix) and types.get(base) == "histogram":
                family = base
        if family not in types:
            fail(f"{name}: a sample of no family opened before it")
        if name.endswith("_bucket") and family != name:
            le = re.search(r'le="([^"]*)"', labels).group(1)
            buckets.setdefault(family, []).append((le, float(value)))
        samples.append((name + labels, float(value)))
    values = dict(samples)
    for family, rows in buckets.items():
        counts = [v for _, v in rows]
        if counts != sorted(counts):
            fail(f"{family}: buckets not cumulative: {rows}")
        if rows[-1][0] != "+Inf" or rows[-1][1] != values[family + "_count"]:
            fail(f"{family}: the last bucket is not +Inf with the count")
    for family in types:
        if f"`{family}`" not in docs:
            fail(f"{family} is not listed in {docs_path}")
    for series, value in samples:
        print(series, repr(value) if value != int(value) else int(value))


def status(method, url):
    try:
        request = urllib.request.Request(url, method=method)
        with urllib.request.urlopen(request, timeout=10) as answer:
            print(answer.status)
    except urllib.error.HTTPError as error:
        print(error.code)


def refused(url):
    parsed = urllib.parse.urlparse(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=5)
    try:
        connection.request("GET", parsed.path)
        connection.getresponse()
    except ConnectionRefusedError:
        sys.exit(0)
    fail(f"{url} still answers")


if __name__ == "__main__":
    if sys.argv[1] == "page":
        page(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "status":
        status(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "refused":
        refused(sys.argv[2])
    else:
        fail(f"unknown mode {sys.argv[1]}")
