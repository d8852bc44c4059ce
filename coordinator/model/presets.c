/* Presets: the run specs that ship with sockmatrix. */
#include "coordinator/model/spec.h"
#include "proto/json.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static const sm_preset presets[] = {
    {
        "seed-tcp-unix",
        "The 2010 test: 8192 lines of 128 bytes over TCP loopback, with and without "
        "TCP_NODELAY, and over a Unix socket.",
        "{\"name\":\"seed-tcp-unix\",\"hosts\":\"all\",\"repetitions\":10,\"warmup\":2,"
        "\"tests\":["
        "{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":[\"tcp\",\"unix\"],"
        "\"framing\":\"lines\",\"msg_size\":128,\"count\":8192,\"nodelay\":[false,true]}]}",
    },
    /* Sized so that a host 100x slower than a 2-core VM that moves 1.4 GB/s over loopback
     * HTTP (0.7 GB/s with TLS) still finishes every job: the 2009 test keeps the seed's 11
     * rounds of 51711600 bytes, since user CPU needs them (docs/benchmarks.md), about 0.4 s a
     * job there and 40 s on such a host; the follow-ups, which multiply the bytes by 4
     * connections and slow them with TLS, move a quarter of the seed's body a connection,
     * 5 rounds: at most 0.45 s a job there. Every job has 120 s before it fails on its time
     * limit, which says so. The measured numbers are in docs/benchmarks.md. */
    {
        "seed-http",
        "The 2009 test: a 51711600-byte body from a local web server (the built-in source) "
        "with libcurl on a new thread per transfer, on reused threads and in one event loop, "
        "alternated; with its follow-ups on a quarter of that body: 4 simultaneous "
        "connections and HTTPS.",
        "{\"name\":\"seed-http\",\"hosts\":\"all\",\"repetitions\":5,\"warmup\":1,"
        "\"tests\":["
        "{\"workload\":\"http\",\"scope\":\"local\",\"client\":[\"thread\",\"pool\",\"multi\"],"
        "\"bytes\":51711600,\"repeat\":11,\"time_limit_ms\":120000},"
        "{\"workload\":\"http\",\"scope\":\"local\",\"client\":[\"thread\",\"pool\",\"multi\"],"
        "\"bytes\":12927900,\"repeat\":5,\"connections\":[1,4],\"tls\":[false,true],"
        "\"time_limit_ms\":120000}]}",
    },
    {
        "quick",
        "A one-minute health check of every host: stream, request/response and connect rate "
        "over TCP loopback and a Unix socket.",
        "{\"name\":\"quick\",\"hosts\":\"all\",\"repetitions\":3,\"warmup\":1,"
        "\"tests\":["
        "{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":[\"tcp\",\"unix\"],"
        "\"msg_size\":131072,\"count\":256},"
        "{\"workload\":\"rr\",\"scope\":\"local\",\"transport\":[\"tcp\",\"unix\"],"
        "\"req_size\":1,\"resp_size\":1,\"duration_ms\":1000},"
        "{\"workload\":\"connect\",\"scope\":\"local\",\"transport\":[\"tcp\",\"unix\"],"
        "\"count\":500}]}",
    },
    {
        "full",
        "Every local workload over TCP loopback and a Unix socket: 64 MiB streams in small to "
        "large writes with and without TCP_NODELAY, round trips of 1 B and 1 KiB, connect rate.",
        "{\"name\":\"full\",\"hosts\":\"all\",\"repetitions\":5,\"warmup\":1,"
        "\"tests\":["
        "{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":[\"tcp\",\"unix\"],"
        "\"msg_size\":[128,4096,131072],\"bytes\":67108864,\"nodelay\":[false,true]},"
        "{\"workload\":\"rr\",\"scope\":\"local\",\"transport\":[\"tcp\",\"unix\"],"
        "\"req_size\":[1,1024],\"duration_ms\":2000},"
        "{\"workload\":\"connect\",\"scope\":\"local\",\"transport\":[\"tcp\",\"unix\"],"
        "\"count\":2000}]}",
    },
    {NULL, NULL, NULL},
};

const sm_preset *sm_presets(void)
{
    return presets;
}

const sm_preset *sm_preset_find(const char *name)
{
    for (const sm_preset *p = presets; name != NULL && p->name != NULL; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

char *sm_presets_encode(void)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *list = root != NULL ? cJSON_AddArrayToObject(root, "presets") : NULL;
    bool ok = list != NULL;
    for (const sm_preset *p = presets; ok && p->name != NULL; p++) {
        cJSON *o = cJSON_CreateObject();
        ok = sm_json_append(list, o) && cJSON_AddStringToObject(o, "name", p->name) != NULL &&
             cJSON_AddStringToObject(o, "description", p->description) != NULL &&
             sm_json_put(o, "spec", cJSON_Parse(p->spec_json));
    }
    return sm_json_finish(root, ok, 0, "presets", NULL);
}
