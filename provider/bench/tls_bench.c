/*
 * tls_bench: TLS 1.3 handshakes per second with many handshakes in flight at once.
 *
 * `openssl s_server` serves one connection at a time, so its CertificateVerify signatures
 * reach the provider one by one and pqgpu's dispatcher never has two to batch. This server
 * runs T threads, each accepting on one shared listening socket and doing a whole handshake
 * in blocking calls: up to T signatures are pending together, and pqgpu's provider coalesces
 * them (on a GPU) into one batch. The client runs C threads of back-to-back full handshakes.
 *
 *   tls_bench server --cert FILE --key FILE [--port N] [--threads T] [--seconds S]
 *                    [--async | --async-callback] [--groups LIST]
 *   tls_bench client --port N --ca FILE [--host NAME] [--threads C] [--seconds S] [--warmup W]
 *                    [--groups LIST]
 *
 * Server: listens on 127.0.0.1:N (0: a free port; the "listening on" line names it), serves
 * until SIGTERM/SIGINT or --seconds (0: no limit), then prints its counts. Exit status 1 when
 * a handshake failed.
 * Client: verifies the server's certificate against --ca (SSL_VERIFY_PEER, and the host name
 * when --host is given), warms up for W seconds, measures for S seconds and prints
 * "handshakes/s". Exit status 1 when a handshake failed or none completed.
 *
 * One connection: TCP connect, full TLS 1.3 handshake (no resumption: no tickets, no session
 * cache, so every handshake makes the server sign), the client sends 1 byte, the server
 * answers 1 byte (so both sides know the other finished), the client sends close_notify and
 * closes with SO_LINGER 0 (a reset: no TIME_WAIT, so loopback's ephemeral ports are never
 * exhausted); the server closes after reading the client's close (it never closes first, so
 * it holds no TIME_WAIT either).
 *
 * --groups limits the key exchange groups (SSL_CTX_set1_groups_list, e.g. X25519MLKEM768 or
 * MLKEM768); without it OpenSSL's default list applies (X25519MLKEM768 first).
 *
 * The providers come from OPENSSL_CONF (e.g. default_properties = ?provider=pqgpu for the
 * server). With --async the server sets SSL_MODE_ASYNC: a handshake runs in an OpenSSL async
 * job, the provider pauses it while its signature is queued, and the thread waits on the
 * job's wait descriptors; with --async-callback it waits for the wait context's callback
 * instead (SSL_set_async_callback: the provider calls it once per wake-up, so a job that does
 * not find its result when resumed would never be woken again: a failure here, after
 * IO_TIMEOUT_S). Without either (the default) the thread blocks in the provider.
 *
 * Link it statically with -Wl,--export-dynamic (provider/bench/build.sh): pqgpu.so links no
 * libcrypto and looks the ASYNC_* functions up in the program when it loads.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/async.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The functions pqgpu.so looks up with dlsym: referenced here so that the static link keeps
 * them (and --export-dynamic exports them) whatever libssl happens to use. */
__attribute__((used)) static void *const keep_for_provider[] = {
    (void *)ASYNC_get_current_job,      (void *)ASYNC_get_wait_ctx,
    (void *)ASYNC_pause_job,            (void *)ASYNC_WAIT_CTX_set_wait_fd,
    (void *)ASYNC_WAIT_CTX_get_fd,      (void *)ASYNC_WAIT_CTX_clear_fd,
    (void *)ASYNC_WAIT_CTX_get_callback,
};

/* A stalled peer fails the connection after this long instead of hanging a thread. */
#define IO_TIMEOUT_S 10
/* At most this many failures are described on stderr (all are counted). */
#define MAX_REPORTED 5

static struct {
    const char *cert, *key, *ca, *host, *groups;
    int port, threads;
    enum { BLOCKING, ASYNC_FDS, ASYNC_CALLBACK } async_mode;
    double seconds, warmup;
} opt = {.port = 0, .threads = 0, .seconds = 0, .warmup = 1};

static SSL_CTX *ctx;
static int listen_fd = -1;
static atomic_int stop;
static atomic_long n_ok, n_failed, n_reported;
static atomic_int first_reported;
static struct timespec t_first; /* server: when the first connection was accepted */
static atomic_int have_first;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static int cpus_allowed(void) {
    cpu_set_t s;
    return sched_getaffinity(0, sizeof s, &s) == 0 ? CPU_COUNT(&s) : 0;
}

static void die(const char *what) {
    fprintf(stderr, "tls_bench: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(2);
}

/* Counts a failed connection; describes the first few (with OpenSSL's error queue). */
static void failed(const char *side, const char *what, SSL *ssl, int ret) {
    int err = errno;
    atomic_fetch_add(&n_failed, 1);
    if (atomic_fetch_add(&n_reported, 1) < MAX_REPORTED) {
        char buf[256] = "";
        unsigned long e = ERR_peek_last_error();
        if (e)
            ERR_error_string_n(e, buf, sizeof buf);
        fprintf(stderr, "%s: failed %s (ssl error %d%s%s) %s\n", side, what,
                ssl ? SSL_get_error(ssl, ret) : 0, err ? ", " : "", err ? strerror(err) : "", buf);
    }
    ERR_clear_error();
}

/* --async-callback: a server thread's wake-up, set by the wait context's callback. */
struct wakeup {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int ready;
};
static __thread struct wakeup thread_wakeup = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

/* Called by the provider (any thread) when the paused job of the SSL may resume. */
static int async_ready(SSL *ssl, void *arg) {
    struct wakeup *w = arg;
    (void)ssl;
    pthread_mutex_lock(&w->lock);
    w->ready = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    return 1;
}

/* Waits up to IO_TIMEOUT_S for this thread's callback; whether it came. */
static int wait_callback(void) {
    struct wakeup *w = &thread_wakeup;
    struct timespec deadline;
    int r = 0;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += IO_TIMEOUT_S;
    pthread_mutex_lock(&w->lock);
    while (!w->ready && r == 0)
        r = pthread_cond_timedwait(&w->cond, &w->lock, &deadline);
    int came = w->ready;
    w->ready = 0;
    pthread_mutex_unlock(&w->lock);
    return came;
}

/* After an SSL call returned `ret`: whether to call it again. In async mode a paused job
 * (SSL_ERROR_WANT_ASYNC) is resumed once one of its wait descriptors is readable, or once
 * its callback came. */
static int retry(SSL *ssl, int ret) {
    switch (SSL_get_error(ssl, ret)) {
    case SSL_ERROR_WANT_ASYNC: {
        if (opt.async_mode == ASYNC_CALLBACK)
            return wait_callback();
        OSSL_ASYNC_FD fds[8];
        size_t n = 0;
        struct pollfd p[8];
        if (!SSL_get_all_async_fds(ssl, NULL, &n) || n == 0 || n > 8 ||
            !SSL_get_all_async_fds(ssl, fds, &n))
            return 0;
        for (size_t i = 0; i < n; i++)
            p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
        return poll(p, n, IO_TIMEOUT_S * 1000) > 0;
    }
    case SSL_ERROR_WANT_ASYNC_JOB: /* no free job in the pool: try again shortly */
        usleep(100);
        return 1;
    default:
        return 0;
    }
}

static void set_socket_options(int fd) {
    int one = 1;
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    /* Small records in both directions: no Nagle delay between them. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* ---- server ---- */

/* One connection: handshake, 1 byte each way, then wait for the client's close. */
static void serve(int fd) {
    SSL *ssl = SSL_new(ctx);
    unsigned char b = 0;
    size_t n = 0;
    int r;
    if (!ssl || !SSL_set_fd(ssl, fd) ||
        (opt.async_mode == ASYNC_CALLBACK && (!SSL_set_async_callback(ssl, async_ready) ||
                                              !SSL_set_async_callback_arg(ssl, &thread_wakeup)))) {
        failed("server", "SSL_new", NULL, 0);
        goto out;
    }
    while ((r = SSL_accept(ssl)) <= 0)
        if (!retry(ssl, r)) {
            failed("server", "handshake", ssl, r);
            goto out;
        }
    while ((r = SSL_read_ex(ssl, &b, 1, &n)) <= 0)
        if (!retry(ssl, r)) {
            failed("server", "read", ssl, r);
            goto out;
        }
    while ((r = SSL_write_ex(ssl, &b, 1, &n)) <= 0)
        if (!retry(ssl, r)) {
            failed("server", "write", ssl, r);
            goto out;
        }
    atomic_fetch_add(&n_ok, 1);
    /* The client's close_notify or reset ends this read; its outcome does not matter. */
    while ((r = SSL_read_ex(ssl, &b, 1, &n)) <= 0 && retry(ssl, r))
        ;
out:
    ERR_clear_error();
    SSL_free(ssl);
    close(fd);
}

static void *server_thread(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                usleep(1000);
            continue; /* EINTR, ECONNABORTED, ...; EINVAL once the socket is shut down */
        }
        if (!atomic_exchange(&have_first, 1))
            clock_gettime(CLOCK_MONOTONIC, &t_first);
        set_socket_options(fd);
        serve(fd);
    }
    return NULL;
}

/* Signs once with the server's key, as a handshake will (same properties, same key). */
static void warm_up(EVP_PKEY *pk) {
    unsigned char sig[8192];
    size_t len = sizeof sig;
    double t = now();
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    if (!m || EVP_DigestSignInit_ex(m, NULL, NULL, NULL, NULL, pk, NULL) != 1 ||
        EVP_DigestSign(m, sig, &len, (const unsigned char *)"warm-up", 7) != 1)
        die("warm-up signature");
    EVP_MD_CTX_free(m);
    printf("server: warm-up signature in %.1f ms\n", 1e3 * (now() - t));
}

static int run_server(void) {
    if (!opt.cert || !opt.key)
        die("server needs --cert and --key");
    ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
        !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION))
        die("SSL_CTX_new");
    /* Every handshake a full one: no tickets, no session cache (no resumption). */
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    if (opt.groups && SSL_CTX_set1_groups_list(ctx, opt.groups) != 1)
        die("--groups");
    if (opt.async_mode != BLOCKING)
        SSL_CTX_set_mode(ctx, SSL_MODE_ASYNC);
    if (SSL_CTX_use_certificate_chain_file(ctx, opt.cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, opt.key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1)
        die("loading the certificate or key");

    /* Which provider the configuration's properties pick for the key's signatures; one
     * signature now starts that provider's backend (a GPU's start-up is not measured). */
    EVP_PKEY *pk = SSL_CTX_get0_privatekey(ctx);
    const char *alg = pk ? EVP_PKEY_get0_type_name(pk) : NULL;
    EVP_SIGNATURE *sig = alg ? EVP_SIGNATURE_fetch(NULL, alg, NULL) : NULL;
    printf("server: key %s, signatures from provider %s\n", alg ? alg : "?",
           sig ? OSSL_PROVIDER_get0_name(EVP_SIGNATURE_get0_provider(sig)) : "?");
    EVP_SIGNATURE_free(sig);
    warm_up(pk);

    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(opt.port)};
    socklen_t al = sizeof a;
    int one = 1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (listen_fd < 0 || setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(listen_fd, (struct sockaddr *)&a, sizeof a) || listen(listen_fd, 4096) ||
        getsockname(listen_fd, (struct sockaddr *)&a, &al))
        die("listening socket");

    /* Signals go to the main thread's sigtimedwait only. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    int t = opt.threads > 0 ? opt.threads : 256;
    pthread_t *th = calloc(t, sizeof *th);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 2 << 20);
    for (int i = 0; i < t; i++)
        if (pthread_create(&th[i], &attr, server_thread, NULL))
            die("pthread_create");
    printf("server: listening on 127.0.0.1:%d, %d threads, %s, %d CPUs allowed\n",
           ntohs(a.sin_port), t, opt.async_mode == BLOCKING      ? "blocking calls"
           : opt.async_mode == ASYNC_FDS ? "SSL_MODE_ASYNC, woken by descriptors"
                                         : "SSL_MODE_ASYNC, woken by callbacks",
           cpus_allowed());
    fflush(stdout);

    double end = opt.seconds > 0 ? now() + opt.seconds : 0;
    for (;;) {
        struct timespec to = {.tv_sec = 1};
        if (end) {
            double left = end - now();
            if (left <= 0)
                break;
            if (left < 1)
                to = (struct timespec){.tv_nsec = (long)(left * 1e9)};
        }
        int s = sigtimedwait(&sigs, NULL, &to);
        if (s == SIGINT || s == SIGTERM)
            break;
    }
    /* Wake the threads blocked in accept(); those in a handshake finish it first. */
    atomic_store(&stop, 1);
    shutdown(listen_fd, SHUT_RDWR);
    for (int i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    double wall = 0;
    if (atomic_load(&have_first)) {
        struct timespec e;
        clock_gettime(CLOCK_MONOTONIC, &e);
        wall = (e.tv_sec - t_first.tv_sec) + (e.tv_nsec - t_first.tv_nsec) / 1e9;
    }
    long ok = atomic_load(&n_ok), bad = atomic_load(&n_failed);
    double cpu = cpu_seconds();
    int ncpu = cpus_allowed();
    printf("server: handshakes %ld ok, %ld failed, in %.2f s since the first connection; "
           "CPU %.2f s (%.1f%% of %d CPUs over that time; %.3f ms CPU per handshake)\n",
           ok, bad, wall, cpu, wall > 0 && ncpu ? 100 * cpu / (wall * ncpu) : 0, ncpu,
           ok ? 1e3 * cpu / ok : 0);
    return bad ? 1 : 0;
}

/* ---- client ---- */

/* Describes the first handshake: protocol, cipher, key exchange group, server signature. */
static void describe(SSL *ssl) {
    const char *sig = NULL;
    X509 *peer = SSL_get0_peer_certificate(ssl);
    EVP_PKEY *pk = peer ? X509_get0_pubkey(peer) : NULL;
    if (!SSL_get0_peer_signature_name(ssl, &sig))
        sig = "?";
    printf("client: first handshake: %s, %s, group %s, server key %s, server signature %s, "
           "verify %s\n",
           SSL_get_version(ssl), SSL_get_cipher_name(ssl), SSL_get0_group_name(ssl),
           pk ? EVP_PKEY_get0_type_name(pk) : "?", sig,
           X509_verify_cert_error_string(SSL_get_verify_result(ssl)));
    fflush(stdout);
}

/* One connection; returns whether it completed. */
static int handshake(void) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(opt.port)};
    struct linger reset = {.l_onoff = 1, .l_linger = 0};
    unsigned char b = 'x';
    size_t n = 0;
    int r, ok = 0;
    SSL *ssl = NULL;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        failed("client", "socket", NULL, 0);
        return 0;
    }
    set_socket_options(fd);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        failed("client", "connect", NULL, 0);
        goto out;
    }
    ssl = SSL_new(ctx);
    if (!ssl || !SSL_set_fd(ssl, fd) ||
        (opt.host && (!SSL_set_tlsext_host_name(ssl, opt.host) || !SSL_set1_host(ssl, opt.host)))) {
        failed("client", "SSL_new", NULL, 0);
        goto out;
    }
    if ((r = SSL_connect(ssl)) != 1) {
        failed("client", "handshake", ssl, r);
        goto out;
    }
    if (SSL_get_verify_result(ssl) != X509_V_OK) { /* SSL_VERIFY_PEER already fails it */
        failed("client", "certificate verification", ssl, 1);
        goto out;
    }
    if ((r = SSL_write_ex(ssl, &b, 1, &n)) != 1) {
        failed("client", "write", ssl, r);
        goto out;
    }
    if ((r = SSL_read_ex(ssl, &b, 1, &n)) != 1) {
        failed("client", "read", ssl, r);
        goto out;
    }
    if (!atomic_exchange(&first_reported, 1))
        describe(ssl);
    ok = 1;
    SSL_shutdown(ssl); /* sends close_notify; no wait for the server's */
out:
    ERR_clear_error();
    SSL_free(ssl);
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    close(fd);
    return ok;
}

static void *client_thread(void *arg) {
    (void)arg;
    while (!atomic_load(&stop))
        if (handshake())
            atomic_fetch_add(&n_ok, 1);
    return NULL;
}

static void sleep_s(double s) {
    struct timespec t = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&t, &t) && errno == EINTR)
        ;
}

static int run_client(void) {
    if (!opt.ca || !opt.port)
        die("client needs --port and --ca");
    ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
        !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION))
        die("SSL_CTX_new");
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    if (opt.groups && SSL_CTX_set1_groups_list(ctx, opt.groups) != 1)
        die("--groups");
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    if (SSL_CTX_load_verify_locations(ctx, opt.ca, NULL) != 1)
        die("loading --ca");

    int t = opt.threads > 0 ? opt.threads : 64;
    double secs = opt.seconds > 0 ? opt.seconds : 3;
    printf("client: 127.0.0.1:%d, %d threads, %d CPUs allowed, warm-up %.1f s, measured %.1f s\n",
           opt.port, t, cpus_allowed(), opt.warmup, secs);
    fflush(stdout);
    pthread_t *th = calloc(t, sizeof *th);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    for (int i = 0; i < t; i++)
        if (pthread_create(&th[i], &attr, client_thread, NULL))
            die("pthread_create");
    sleep_s(opt.warmup);
    double t0 = now(), c0 = cpu_seconds();
    long ok0 = atomic_load(&n_ok);
    sleep_s(secs);
    double t1 = now(), c1 = cpu_seconds();
    long ok1 = atomic_load(&n_ok);
    atomic_store(&stop, 1);
    for (int i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    long bad = atomic_load(&n_failed), done = ok1 - ok0;
    int ncpu = cpus_allowed();
    printf("client: handshakes/s %.1f (%ld in %.2f s); failed %ld (whole run, warm-up "
           "included); client CPU %.1f%% of %d CPUs\n",
           done / (t1 - t0), done, t1 - t0, bad, ncpu ? 100 * (c1 - c0) / ((t1 - t0) * ncpu) : 0,
           ncpu);
    return bad || done == 0 ? 1 : 0;
}

static void usage(void) {
    fprintf(stderr,
            "usage: tls_bench server --cert FILE --key FILE [--port N] [--threads T] "
            "[--seconds S] [--async | --async-callback] [--groups LIST]\n"
            "       tls_bench client --port N --ca FILE [--host NAME] [--threads C] "
            "[--seconds S] [--warmup W] [--groups LIST]\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 2)
        usage();
    int server = !strcmp(argv[1], "server");
    if (!server && strcmp(argv[1], "client"))
        usage();
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--async") || !strcmp(a, "--async-callback")) {
            opt.async_mode = strcmp(a, "--async") ? ASYNC_CALLBACK : ASYNC_FDS;
            continue;
        }
        if (!v)
            usage();
        i++;
        if (!strcmp(a, "--cert"))
            opt.cert = v;
        else if (!strcmp(a, "--key"))
            opt.key = v;
        else if (!strcmp(a, "--ca"))
            opt.ca = v;
        else if (!strcmp(a, "--host"))
            opt.host = v;
        else if (!strcmp(a, "--groups"))
            opt.groups = v;
        else if (!strcmp(a, "--port"))
            opt.port = atoi(v);
        else if (!strcmp(a, "--threads"))
            opt.threads = atoi(v);
        else if (!strcmp(a, "--seconds"))
            opt.seconds = atof(v);
        else if (!strcmp(a, "--warmup"))
            opt.warmup = atof(v);
        else
            usage();
    }
    /* A peer's reset must fail a write, not kill the process. */
    signal(SIGPIPE, SIG_IGN);
    /* One socket per thread, and in async mode descriptors for the jobs' wait contexts:
     * beyond the usual soft limit of 1024 with a thousand threads. */
    struct rlimit nofile;
    if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    if (!OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL))
        die("OpenSSL initialization (OPENSSL_CONF)");
    setvbuf(stdout, NULL, _IOLBF, 0);
    return server ? run_server() : run_client();
}
