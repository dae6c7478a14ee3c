/* Reads and writes bags through rbag.h, for tests/c_programs.rs.
 *
 *   read_write read BAG START END [TOPIC...]   START/END: ns, or - for none
 *   read_write write OUT.bag OUT.mcap ABANDONED.mcap N
 *   read_write open PATH                        prints the error opening PATH gives
 *
 * `read` prints the bag's summary and, per topic, the messages read, their bytes and an
 * FNV-1a 64 digest of their data in order; the test compares them with rbag-bag's own.
 * `write` writes N std_msgs/String messages on /chatter (by type name) and /echo (with an
 * explicit definition) into a ROS 1 bag and an MCAP file, from bytes serialized here. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbag.h"

#define CHECK(call)                                                                          \
    do {                                                                                     \
        rbag_status s_ = (call);                                                             \
        if (s_ != RBAG_OK) {                                                                 \
            fprintf(stderr, "%s failed: %s: %s\n", #call, rbag_status_name(s_), rbag_last_error()); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

typedef struct {
    const char *topic; /* owned by the bag, which the iterator keeps alive */
    uint64_t count;
    uint64_t bytes;
    uint64_t fnv;
} topic_stats;

static int by_topic(const void *a, const void *b) {
    return strcmp(((const topic_stats *)a)->topic, ((const topic_stats *)b)->topic);
}

static int read_bag(int argc, char **argv) {
    if (argc < 5) return 2;
    rbag_bag *bag = NULL;
    CHECK(rbag_open(argv[2], &bag));

    char *info = NULL;
    CHECK(rbag_bag_info_json(bag, &info));
    printf("info %s\n", info);
    rbag_string_free(info);

    uint64_t count = 0, start = 0, end = 0;
    CHECK(rbag_bag_message_count(bag, &count));
    printf("messages %" PRIu64 "\n", count);
    rbag_status range = rbag_bag_time_range(bag, &start, &end);
    if (range == RBAG_OK) {
        printf("range %" PRIu64 " %" PRIu64 "\n", start, end);
    } else if (range == RBAG_END) {
        printf("range none\n");
    } else {
        CHECK(range);
    }

    size_t n_conns = 0;
    CHECK(rbag_bag_connection_count(bag, &n_conns));
    printf("connections %zu\n", n_conns);
    for (size_t i = 0; i < n_conns; i++) {
        rbag_connection c;
        CHECK(rbag_bag_connection(bag, i, &c));
        rbag_connection again;
        CHECK(rbag_bag_connection_by_id(bag, c.id, &again));
        if (strcmp(again.topic, c.topic) != 0) {
            fprintf(stderr, "connection %" PRIu32 ": by index %s, by id %s\n", c.id, c.topic, again.topic);
            return 1;
        }
        printf("connection %" PRIu32 " %s %s %s %s %" PRIu64 " %zu\n", c.id, c.topic, c.message_type, c.encoding,
               c.definition_encoding[0] ? c.definition_encoding : "-", c.message_count, strlen(c.definition));
    }
    rbag_connection none;
    if (rbag_bag_connection(bag, n_conns, &none) != RBAG_ERR_NOT_FOUND) {
        fprintf(stderr, "a connection past the last is not RBAG_ERR_NOT_FOUND\n");
        return 1;
    }

    rbag_filter filter;
    memset(&filter, 0, sizeof filter);
    if (strcmp(argv[3], "-") != 0) {
        filter.has_start = true;
        filter.start_ns = strtoull(argv[3], NULL, 10);
    }
    if (strcmp(argv[4], "-") != 0) {
        filter.has_end = true;
        filter.end_ns = strtoull(argv[4], NULL, 10);
    }
    filter.topics = (const char *const *)&argv[5];
    filter.topic_count = (size_t)(argc - 5);

    rbag_iter *it = NULL;
    CHECK(rbag_messages(bag, &filter, &it));
    /* The iterator keeps the bag open. */
    rbag_bag_free(bag);

    topic_stats *stats = NULL;
    size_t n_stats = 0;
    uint64_t total = 0;
    rbag_message m;
    rbag_status s;
    while ((s = rbag_iter_next(it, &m)) == RBAG_OK) {
        size_t k = 0;
        while (k < n_stats && strcmp(stats[k].topic, m.topic) != 0) k++;
        if (k == n_stats) {
            topic_stats *grown = realloc(stats, (n_stats + 1) * sizeof *stats);
            if (!grown) return 1;
            stats = grown;
            stats[k].topic = m.topic;
            stats[k].count = 0;
            stats[k].bytes = 0;
            stats[k].fnv = 0xcbf29ce484222325ULL;
            n_stats++;
        }
        stats[k].count++;
        stats[k].bytes += m.size;
        for (size_t i = 0; i < m.size; i++) {
            stats[k].fnv ^= m.data[i];
            stats[k].fnv *= 0x100000001b3ULL;
        }
        total++;
    }
    if (s != RBAG_END) CHECK(s);
    if (rbag_iter_next(it, &m) != RBAG_END || m.data != NULL) {
        fprintf(stderr, "an iterator past its end does not stay at RBAG_END\n");
        return 1;
    }
    qsort(stats, n_stats, sizeof *stats, by_topic);
    for (size_t k = 0; k < n_stats; k++) {
        printf("count %s %" PRIu64 " %" PRIu64 " %016" PRIx64 "\n", stats[k].topic, stats[k].count, stats[k].bytes,
               stats[k].fnv);
    }
    printf("total %" PRIu64 "\n", total);
    free(stats);
    rbag_iter_free(it);
    return 0;
}

/* A std_msgs/String in ROS 1: uint32 length, then the bytes. */
static size_t ros1_string(uint8_t *out, const char *text) {
    uint32_t n = (uint32_t)strlen(text);
    for (int i = 0; i < 4; i++) out[i] = (uint8_t)(n >> (8 * i));
    memcpy(out + 4, text, n);
    return 4 + n;
}

/* The same in CDR: little-endian encapsulation header, uint32 length counting the NUL, the
 * bytes and the NUL. */
static size_t cdr_string(uint8_t *out, const char *text) {
    uint32_t n = (uint32_t)strlen(text) + 1;
    const uint8_t header[4] = {0x00, 0x01, 0x00, 0x00};
    memcpy(out, header, 4);
    for (int i = 0; i < 4; i++) out[4 + i] = (uint8_t)(n >> (8 * i));
    memcpy(out + 8, text, n);
    return 8 + n;
}

static void write_strings(rbag_writer *w, uint32_t chatter, uint32_t echo, int n, int cdr) {
    uint8_t buf[128];
    char text[64];
    for (int i = 0; i < n; i++) {
        uint64_t t = 1000000000ULL + (uint64_t)i * 1000000ULL;
        snprintf(text, sizeof text, "hello %d", i);
        size_t len = cdr ? cdr_string(buf, text) : ros1_string(buf, text);
        CHECK(rbag_writer_write(w, chatter, t, t - 500, buf, len));
        snprintf(text, sizeof text, "echo %d", i);
        len = cdr ? cdr_string(buf, text) : ros1_string(buf, text);
        CHECK(rbag_writer_write(w, echo, t + 1, t + 1, buf, len));
    }
}

static int write_bags(int argc, char **argv) {
    if (argc != 6) return 2;
    int n = atoi(argv[5]);
    uint32_t chatter, echo;

    rbag_write_options lz4 = {.compression = "lz4", .overwrite = false};
    rbag_writer *w = NULL;
    CHECK(rbag_writer_create(argv[2], NULL, &lz4, &w));
    CHECK(rbag_writer_add_connection(w, "/chatter", "std_msgs/String", &chatter));
    CHECK(rbag_writer_add_connection_with_definition(w, "/echo", "std_msgs/String", NULL, "string data\n", NULL,
                                                     "{\"callerid\": \"/read_write_c\"}", &echo));
    write_strings(w, chatter, echo, n, 0);
    if (rbag_writer_write(w, 999, 1, 1, NULL, 0) != RBAG_ERR_INVALID_ARGUMENT) {
        fprintf(stderr, "a write on an unknown connection is not RBAG_ERR_INVALID_ARGUMENT\n");
        return 1;
    }
    CHECK(rbag_writer_finish(w));

    rbag_write_options zstd = {.compression = "zstd", .overwrite = false};
    CHECK(rbag_writer_create(argv[3], "mcap", &zstd, &w));
    CHECK(rbag_writer_add_connection(w, "/chatter", "std_msgs/msg/String", &chatter));
    CHECK(rbag_writer_add_connection_with_definition(w, "/echo", "std_msgs/msg/String", "cdr", "string data\n",
                                                     "ros2msg", NULL, &echo));
    write_strings(w, chatter, echo, n, 1);
    CHECK(rbag_writer_finish(w));

    /* An abandoned writer leaves nothing behind. */
    CHECK(rbag_writer_create(argv[4], NULL, NULL, &w));
    CHECK(rbag_writer_add_connection(w, "/chatter", "std_msgs/msg/String", &chatter));
    write_strings(w, chatter, chatter, 3, 1);
    rbag_writer_free(w);

    /* Writing over an existing bag is refused unless asked for. */
    rbag_writer *again = NULL;
    rbag_status s = rbag_writer_create(argv[2], NULL, NULL, &again);
    if (s != RBAG_ERR_EXISTS || again != NULL) {
        fprintf(stderr, "creating over an existing bag gave %s\n", rbag_status_name(s));
        return 1;
    }
    printf("wrote %d\n", n);
    return 0;
}

static int open_only(int argc, char **argv) {
    if (argc != 3) return 2;
    rbag_bag *bag = NULL;
    rbag_status s = rbag_open(argv[2], &bag);
    if (s == RBAG_OK) {
        printf("ok\n");
        rbag_bag_free(bag);
        return 0;
    }
    printf("error %s %s\n", rbag_status_name(s), rbag_last_error());
    return bag == NULL ? 3 : 1;
}

int main(int argc, char **argv) {
    printf("rbag %s, API %d\n", rbag_version(), RBAG_API_VERSION);
    if (argc >= 2 && strcmp(argv[1], "read") == 0) return read_bag(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "write") == 0) return write_bags(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "open") == 0) return open_only(argc, argv);
    fprintf(stderr, "usage: read_write read BAG START END [TOPIC...] | write OUT.bag OUT.mcap ABANDONED.mcap N | open PATH\n");
    return 2;
}
