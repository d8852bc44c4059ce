/* sm-rogue: sends the coordinator messages it must refuse, and plays a man in the middle
 * without the key (tests only).
 *   sm-rogue URL FLEET_KEYFILE wrong-key|replay|oversize|deep|garbage|fleet-key|reserved|flood
 * wrong-key: a well-formed poll sealed with a random key. replay: a valid poll (agent
 * "rogue-replay", under its own derived key), then the same bytes again. oversize: 300 KiB.
 * deep: valid MAC around a body nested 40 deep. garbage: not JSON. fleet-key: a poll of
 * "rogue-fleet" sealed with the fleet key itself instead of its own. reserved: a poll from
 * "coordinator". flood: 200 polls with a wrong MAC on one connection. Prints what it sent;
 * exits 0 when everything was sent.
 *   sm-rogue relay LISTEN_URL UPSTREAM_URL CAPTURE_FILE
 * Stands between one agent and the coordinator with no key: passes each poll up and each
 * reply down unchanged, and writes the first reply that carries an "assign" to CAPTURE_FILE.
 * Runs until killed.
 *   sm-rogue answer LISTEN_URL CAPTURE_FILE
 * A fake coordinator with no key: answers every poll with the captured bytes. Runs until
 * killed.
 *   sm-rogue late LISTEN_URL DELAY_MS
 * A coordinator too slow for its agent: answers the first poll DELAY_MS after it came (by then
 * the agent has given up on it and polled again), then takes polls and never answers. Prints
 * "received poll N" for each. Runs until killed. */
#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <openssl/rand.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/session/session.h"
#include "proto/clock.h"
#include "proto/envelope.h"
#include "proto/msg.h"

#define FLOOD_N 200

/* Each message goes on a fresh REQ socket: a refused request gets no answer, and a REQ socket
 * would otherwise wait for it. The bytes go as they are (no sealing: most are not envelopes),
 * and an answer is only counted, not opened. */
static int send_raw(const char *url, const char *data, size_t len, int want_reply)
{
    sm_session *ses = NULL;
    sm_error err = {0};
    const sm_session_opts o = {.url = url, .send_timeout_ms = 2000, .recv_timeout_ms = 2000};
    if (sm_session_open(&ses, &o, NULL, NULL, &err) != 0) {
        fprintf(stderr, "sm-rogue: send: %s\n", err.msg);
        return 1;
    }
    if (nn_send(sm_session_socket(ses), data, len, 0) < 0) {
        fprintf(stderr, "sm-rogue: send: %s\n", nn_strerror(nn_errno()));
        sm_session_close(ses);
        return 1;
    }
    char *buf = NULL;
    int n = nn_recv(sm_session_socket(ses), &buf, NN_MSG, 0);
    printf("sent %zu bytes, %s\n", len, n >= 0 ? "answered" : "no answer");
    if (n >= 0)
        nn_freemsg(buf);
    sm_session_close(ses);
    return want_reply && n < 0;
}

static char *poll_body(const char *agent, size_t *len)
{
    sm_poll p;
    sm_error err = {0};
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "%s", agent);
    memset(p.boot, 'a', SM_BOOT_HEX);
    return sm_msg_poll_encode(&p, len, &err);
}

/* A poll from `name`, sealed with `key` as an agent seals it. */
static char *sealed_poll(const uint8_t key[SM_KEY_LEN], const char *name, size_t *elen,
                         sm_error *err)
{
    size_t blen;
    char *body = poll_body(name, &blen);
    char *env = body ? sm_env_seal(key, SM_DIR_TO_COORDINATOR, name, (uint64_t)sm_wall_ms(), body,
                                   blen, elen, NULL, err)
                     : NULL;
    free(body);
    return env;
}

static int rep_socket(const char *url)
{
    int s = nn_socket(AF_SP, NN_REP);
    if (s < 0 || nn_bind(s, url) < 0) {
        fprintf(stderr, "sm-rogue: cannot listen on %s: %s\n", url, nn_strerror(nn_errno()));
        return -1;
    }
    return s;
}

/* relay: one request at a time, in order; replies the agent no longer waits for are dropped by
 * its REQ socket, as they would be on the wire. */
static int relay(const char *listen, const char *upstream, const char *capture)
{
    int down = rep_socket(listen);
    int up = nn_socket(AF_SP, NN_REQ);
    int resend = 3600 * 1000, rcv = 15000;
    if (down < 0 || up < 0 ||
        nn_setsockopt(up, NN_REQ, NN_REQ_RESEND_IVL, &resend, sizeof resend) < 0 ||
        nn_setsockopt(up, NN_SOL_SOCKET, NN_RCVTIMEO, &rcv, sizeof rcv) < 0 ||
        nn_connect(up, upstream) < 0) {
        fprintf(stderr, "sm-rogue: relay: %s\n", nn_strerror(nn_errno()));
        return 1;
    }
    printf("relaying %s -> %s\n", listen, upstream);
    fflush(stdout);
    bool captured = false;
    for (;;) {
        char *req = NULL, *rep = NULL;
        int n = nn_recv(down, &req, NN_MSG, 0);
        if (n < 0)
            continue;
        int sent = nn_send(up, req, (size_t)n, 0);
        nn_freemsg(req);
        if (sent < 0)
            continue;
        int m = nn_recv(up, &rep, NN_MSG, 0);
        if (m < 0)
            continue;
        if (!captured && memmem(rep, (size_t)m, "\"type\":\"assign\"", 15) != NULL) {
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", capture);
            FILE *f = fopen(tmp, "wb");
            if (f && fwrite(rep, 1, (size_t)m, f) == (size_t)m && fclose(f) == 0 &&
                rename(tmp, capture) == 0) {
                captured = true;
                printf("captured an assign reply of %d bytes\n", m);
                fflush(stdout);
            }
        }
        nn_send(down, rep, (size_t)m, 0);
        nn_freemsg(rep);
    }
}

static int answer(const char *listen, const char *capture)
{
    FILE *f = fopen(capture, "rb");
    if (!f) {
        fprintf(stderr, "sm-rogue: cannot read %s: %s\n", capture, strerror(errno));
        return 1;
    }
    static char buf[SM_MSG_MAX];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    int s = rep_socket(listen);
    if (s < 0)
        return 1;
    printf("answering every poll on %s with %zu captured bytes\n", listen, len);
    fflush(stdout);
    for (unsigned n = 1;; n++) {
        char *req = NULL;
        if (nn_recv(s, &req, NN_MSG, 0) < 0)
            continue;
        nn_freemsg(req);
        if (nn_send(s, buf, len, 0) >= 0) {
            printf("answered poll %u\n", n);
            fflush(stdout);
        }
    }
}

/* late: the agent's REQ socket drops the first answer (it answers a cancelled request), and
 * nothing answers the polls after it. */
static int late(const char *listen, const char *delay_ms)
{
    int s = rep_socket(listen);
    if (s < 0)
        return 1;
    printf("answering the first poll %s ms late on %s\n", delay_ms, listen);
    fflush(stdout);
    struct timespec delay = {.tv_sec = atoi(delay_ms) / 1000,
                             .tv_nsec = (long)(atoi(delay_ms) % 1000) * 1000000L};
    for (unsigned n = 1;; n++) {
        char *req = NULL;
        if (nn_recv(s, &req, NN_MSG, 0) < 0)
            continue;
        nn_freemsg(req);
        printf("received poll %u\n", n);
        fflush(stdout);
        if (n != 1)
            continue; /* the next nn_recv drops it unanswered */
        nanosleep(&delay, NULL);
        /* Longer than nanomsg keeps inside its message header: the body is a chunk of its own. */
        static const char junk[256] = "a late answer";
        if (nn_send(s, junk, sizeof junk, 0) >= 0) {
            printf("answered poll 1 late\n");
            fflush(stdout);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "relay") == 0)
        return relay(argv[2], argv[3], argv[4]);
    if (argc == 4 && strcmp(argv[1], "answer") == 0)
        return answer(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "late") == 0)
        return late(argv[2], argv[3]);
    if (argc != 4) {
        fprintf(stderr, "usage: sm-rogue URL FLEET_KEYFILE "
                        "wrong-key|replay|oversize|deep|garbage|fleet-key|reserved|flood\n"
                        "       sm-rogue relay LISTEN_URL UPSTREAM_URL CAPTURE_FILE\n"
                        "       sm-rogue answer LISTEN_URL CAPTURE_FILE\n");
        return 2;
    }
    const char *url = argv[1], *what = argv[3];
    uint8_t fleet[SM_KEY_LEN], key[SM_KEY_LEN];
    sm_error err = {0};
    if (sm_key_load(argv[2], fleet, &err) != 0) {
        fprintf(stderr, "sm-rogue: %s\n", err.msg);
        return 2;
    }
    size_t elen;
    char *env = NULL;
    int rc = 0;
    if (strcmp(what, "wrong-key") == 0) {
        RAND_bytes(key, sizeof key);
        env = sealed_poll(key, "rogue-key", &elen, &err);
        rc = env ? send_raw(url, env, elen, 0) : 1;
    } else if (strcmp(what, "replay") == 0) {
        if (sm_key_derive(fleet, "rogue-replay", key, &err) == 0)
            env = sealed_poll(key, "rogue-replay", &elen, &err);
        rc = env ? send_raw(url, env, elen, 1) || send_raw(url, env, elen, 0) : 1;
    } else if (strcmp(what, "fleet-key") == 0) {
        env = sealed_poll(fleet, "rogue-fleet", &elen, &err);
        rc = env ? send_raw(url, env, elen, 0) : 1;
    } else if (strcmp(what, "reserved") == 0) {
        /* No agent key exists for the name: the fleet key is what a rogue would try. */
        env = sealed_poll(fleet, SM_COORDINATOR, &elen, &err);
        rc = env ? send_raw(url, env, elen, 0) : 1;
    } else if (strcmp(what, "oversize") == 0) {
        elen = 300 * 1024;
        env = malloc(elen + 1);
        memset(env, ' ', elen);
        env[0] = '{';
        env[elen - 1] = '}';
        rc = send_raw(url, env, elen, 0);
    } else if (strcmp(what, "deep") == 0) {
        char deep[128];
        int n = 40;
        for (int i = 0; i < n; i++)
            deep[i] = '[';
        for (int i = 0; i < n; i++)
            deep[n + i] = ']';
        if (sm_key_derive(fleet, "rogue-deep", key, &err) == 0)
            env = sm_env_seal(key, SM_DIR_TO_COORDINATOR, "rogue-deep", (uint64_t)sm_wall_ms(),
                              deep, 2 * (size_t)n, &elen, NULL, &err);
        rc = env ? send_raw(url, env, elen, 0) : 1;
    } else if (strcmp(what, "flood") == 0) {
        /* One connection, many wrong MACs: each send on a REQ socket drops the last request
         * and sends the next on the same pipe. */
        RAND_bytes(key, sizeof key);
        sm_session *ses = NULL;
        const sm_session_opts o = {.url = url, .send_timeout_ms = 2000};
        rc = sm_session_open(&ses, &o, key, "rogue-flood", &err) != 0;
        /* A REQ socket keeps only the newest request until it is connected. */
        usleep(300 * 1000);
        for (int i = 0; rc == 0 && i < FLOOD_N; i++) {
            size_t blen;
            char *body = poll_body("rogue-flood", &blen);
            rc = !body || sm_session_send(ses, body, blen, (uint64_t)sm_wall_ms(), 0, &err) != 0;
            free(body);
            usleep(5 * 1000); /* each is written out before the next replaces it */
        }
        if (rc == 0) {
            usleep(500 * 1000); /* let nanomsg write them out before the process exits */
            printf("sent %d polls with a wrong MAC on one connection\n", FLOOD_N);
        }
        sm_session_close(ses);
    } else if (strcmp(what, "garbage") == 0) {
        rc = send_raw(url, "hello", 5, 0);
    } else {
        fprintf(stderr, "sm-rogue: unknown case '%s'\n", what);
        return 2;
    }
    if (!env && rc != 0 && strcmp(what, "garbage") != 0 && err.msg[0])
        fprintf(stderr, "sm-rogue: %s\n", err.msg);
    free(env);
    return rc;
}
