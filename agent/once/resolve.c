/* Option parsing for sockmatrix-agent --once, second half: from the options as typed to the
 * run's tests (the presets, the user's options over them, each workload's checks, the variants). */
#include "agent/once/internal.h"

#include <stdio.h>
#include <string.h>

/* The presets: a whole test, overridable option by option. */
static int apply_preset(sm_once_opts *o, sm_error *err)
{
    if (strcmp(o->preset, "seed-tcp-unix") == 0) {
        sm_params_init(&o->base, SM_WL_STREAM);
        o->base.framing = SM_FRAMING_LINES;
        o->base.msg_size = 128;
        o->base.count = 8192;
        o->transports[0] = SM_TR_TCP;
        o->transports[1] = SM_TR_UNIX;
        o->n_transports = 2;
        o->nodelay_order[0] = false;
        o->nodelay_order[1] = true;
        o->n_nodelay = 2;
        o->repetitions = 10;
        o->warmup = 2;
        return 0;
    }
    if (strcmp(o->preset, "seed-http") == 0) {
        /* The 2009 test: a ~50 MB file from a local server, one connection, the client models
         * alternated; 51711600 bytes is the seed's file. Ten measured transfers a job: at
         * several GB/s fewer would leave user CPU to a few scheduler ticks. */
        sm_params_init(&o->base, SM_WL_HTTP);
        o->base.bytes = 51711600;
        o->base.repeat = 11;
        /* As the coordinator's seed-http preset: room for a host 100x slower (about 40 s). */
        o->base.time_limit_ms = 120000;
        o->transports[0] = SM_TR_TCP;
        o->n_transports = 1;
        o->clients[0] = SM_HTTP_THREAD;
        o->clients[1] = SM_HTTP_POOL;
        o->clients[2] = SM_HTTP_MULTI;
        o->n_clients = 3;
        o->repetitions = 5;
        o->warmup = 1;
        return 0;
    }
    return sm_error_set(err, SM_EINVAL, "--preset: '%s' is not a preset (seed-tcp-unix, seed-http)",
                        o->preset);
}

static void apply_given(sm_once_opts *o, const given *g)
{
    sm_params *p = &o->base;
    if (g->workload && (!o->preset[0] || g->v.workload != p->workload))
        sm_params_init(p, g->v.workload);
    if (g->count || g->bytes || g->duration) {
        p->count = g->count ? g->v.count : 0;
        p->bytes = g->bytes ? g->v.bytes : 0;
        p->duration_ms = g->duration ? g->v.duration_ms : 0;
    }
#define TAKE(flag, field)                                                                          \
    if (g->flag)                                                                                   \
    p->field = g->v.field
    TAKE(msg_size, msg_size);
    TAKE(framing, framing);
    TAKE(cork, cork);
    TAKE(sndbuf, sndbuf);
    TAKE(rcvbuf, rcvbuf);
    TAKE(read_size, read_size);
    TAKE(req_size, req_size);
    TAKE(resp_size, resp_size);
    TAKE(time_limit, time_limit_ms);
    TAKE(connections, connections);
    TAKE(repeat, repeat);
    TAKE(buffer_size, buffer_size);
    TAKE(fresh_connect, fresh_connect);
    TAKE(http2, http2);
    TAKE(tls, tls);
    TAKE(verify, verify);
#undef TAKE
    if (g->url) {
        memcpy(p->url, g->v.url, sizeof p->url);
        /* A url's body is whatever size it is, unless --bytes says which. */
        if (!g->bytes)
            p->bytes = 0;
    }
}

/* Validation speaks of fields ("msg_size: ..."); on the command line the same rule is
 * about options, so the field names before the first colon become "--msg-size". */
static int as_options(sm_error *err)
{
    char out[SM_ERR_MSG_MAX];
    const char *colon = strchr(err->msg, ':');
    if (!colon)
        return err->code;
    size_t o = 0;
    int start = 1;
    for (const char *c = err->msg; c < colon && o < sizeof out - 4; c++) {
        if (start && *c != ' ') {
            out[o++] = '-';
            out[o++] = '-';
            start = 0;
        }
        out[o++] = *c == '_' ? '-' : *c;
        if (*c == ',')
            start = 1;
    }
    snprintf(out + o, sizeof out - o, "%s", colon);
    memcpy(err->msg, out, sizeof out);
    return err->code;
}

/* user_nodelay: --nodelay was given; a preset's nodelay variants simply do not apply to a
 * run without tcp. */
static int validate_variants(const sm_once_opts *o, bool user_nodelay, sm_error *err)
{
    if (o->base.workload == SM_WL_HTTP) {
        for (size_t t = 0; t < o->n_transports; t++)
            if (o->transports[t] != SM_TR_TCP)
                return sm_error_set(err, SM_EINVAL,
                                    "--transport: workload http runs over tcp only");
        for (size_t k = 0; k < o->n_clients; k++) {
            sm_params p;
            sm_opts_http_variant(o, o->clients[k], &p);
            if (sm_params_validate(&p, err))
                return as_options(err);
        }
        return 0;
    }
    for (size_t t = 0; t < o->n_transports; t++) {
        for (size_t n = 0; n < (o->transports[t] == SM_TR_TCP ? o->n_nodelay : 1); n++) {
            sm_params p;
            sm_opts_variant(o, o->transports[t], o->nodelay_order[n], &p);
            if (sm_params_validate(&p, err))
                return as_options(err);
        }
    }
    bool tcp = false;
    for (size_t t = 0; t < o->n_transports; t++)
        tcp |= o->transports[t] == SM_TR_TCP;
    if (!tcp && o->base.cork)
        return sm_error_set(err, SM_EINVAL, "--cork: applies to transport tcp only");
    for (size_t n = 0; !tcp && user_nodelay && n < o->n_nodelay; n++)
        if (o->nodelay_order[n])
            return sm_error_set(err, SM_EINVAL, "--nodelay: applies to transport tcp only");
    return 0;
}

void sm_opts_variant(const sm_once_opts *o, sm_transport_kind t, bool nodelay, sm_params *out)
{
    *out = o->base;
    out->transport = t;
    out->nodelay = t == SM_TR_TCP && nodelay;
    if (t != SM_TR_TCP)
        out->cork = false;
}

void sm_opts_http_variant(const sm_once_opts *o, sm_http_client c, sm_params *out)
{
    *out = o->base;
    out->transport = SM_TR_TCP;
    out->client = c;
}

/* The lists and repetitions the user gave win over the preset's. */
static int apply_cli(sm_once_opts *o, const sm_once_opts *cli, const given *g, sm_error *err)
{
    if (g->transports || !o->preset[0]) {
        memcpy(o->transports, cli->transports, sizeof o->transports);
        o->n_transports = cli->n_transports;
    }
    if (g->nodelay || !o->preset[0]) {
        memcpy(o->nodelay_order, cli->nodelay_order, sizeof o->nodelay_order);
        o->n_nodelay = cli->n_nodelay;
    }
    if (g->clients || !o->preset[0]) {
        memcpy(o->clients, cli->clients, sizeof o->clients);
        o->n_clients = cli->n_clients;
    }
    if (g->repetitions || !o->preset[0])
        o->repetitions = cli->repetitions;
    if ((g->max_reps || g->ci_rel) && !cli->reps_auto)
        return sm_error_set(err, SM_EINVAL,
                            "--max-repetitions and --ci-rel go with --repetitions auto");
    if (cli->reps_auto) {
        /* The coordinator's defaults; a --max-repetitions below 5 lowers the minimum too. */
        o->reps_auto = true;
        o->reps.max = g->max_reps ? cli->reps.max : SM_REPS_AUTO_MAX;
        o->reps.ci_rel = g->ci_rel ? cli->reps.ci_rel : SM_REPS_AUTO_CI_REL;
        o->reps.min = o->reps.max < SM_REPS_AUTO_MIN ? o->reps.max : SM_REPS_AUTO_MIN;
        o->repetitions = o->reps.min;
    }
    if (g->warmup || !o->preset[0])
        o->warmup = cli->warmup;
    return 0;
}

/* Options that belong to one workload, and the side each test fault can break. */
static int check_workload_options(sm_once_opts *o, const given *g, sm_error *err)
{
    /* http runs over tcp alone: the transport list only says so unless the user gave one. */
    if (o->base.workload == SM_WL_HTTP && !g->transports) {
        o->transports[0] = SM_TR_TCP;
        o->n_transports = 1;
    }
    if (o->base.workload != SM_WL_HTTP && g->clients)
        return sm_error_set(err, SM_EINVAL, "--client: applies to workload http only");
    /* A list option of the transports' own, which the http variants would never read. */
    if (o->base.workload == SM_WL_HTTP && g->nodelay)
        return sm_error_set(err, SM_EINVAL, "--nodelay: does not apply to workload http");
    /* Each fault has the one side it can break. */
    const sm_params *b = &o->base;
    bool stream_fault = o->fault != SM_FAULT_WRONG_PIN && b->workload == SM_WL_STREAM;
    bool source_fault = (o->fault == SM_FAULT_SHORT || o->fault == SM_FAULT_STALL) &&
                        b->workload == SM_WL_HTTP && !b->url[0];
    bool pin_fault = o->fault == SM_FAULT_WRONG_PIN && b->workload == SM_WL_HTTP && b->tls;
    if (o->fault != SM_FAULT_NONE && !stream_fault && !source_fault && !pin_fault)
        return sm_error_set(err, SM_EINVAL,
                            "--test-fault: corrupt, short and stall apply to workload stream, "
                            "short and stall to the built-in http source, wrong-pin to --tls");
    return 0;
}

int opts_resolve(sm_once_opts *o, const sm_once_opts *cli, const given *g, sm_error *err)
{
    int rc;
    if (o->preset[0] && (rc = apply_preset(o, err)))
        return rc;
    if ((rc = apply_cli(o, cli, g, err)))
        return rc;
    apply_given(o, g);
    if ((rc = check_workload_options(o, g, err)))
        return rc;
    return validate_variants(o, g->nodelay, err);
}
