// The C++ twin of read_write.c, through the same rbag.h: the same commands and output, with
// the handles held by std::unique_ptr so that every path frees them.
//
//   read_write read BAG START END [TOPIC...]   START/END: ns, or - for none
//   read_write write OUT.bag OUT.mcap ABANDONED.mcap N
//   read_write open PATH
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rbag.h"

namespace {

struct BagFree {
    void operator()(rbag_bag *b) const { rbag_bag_free(b); }
};
struct IterFree {
    void operator()(rbag_iter *it) const { rbag_iter_free(it); }
};
struct WriterFree {
    void operator()(rbag_writer *w) const { rbag_writer_free(w); }
};
struct StringFree {
    void operator()(char *s) const { rbag_string_free(s); }
};
using Bag = std::unique_ptr<rbag_bag, BagFree>;
using Iter = std::unique_ptr<rbag_iter, IterFree>;
using Writer = std::unique_ptr<rbag_writer, WriterFree>;

// An rbag error as an exception, with rbag's message.
struct Error : std::runtime_error {
    explicit Error(const std::string &what, rbag_status s)
        : std::runtime_error(what + ": " + rbag_status_name(s) + ": " + rbag_last_error()) {}
};

void check(rbag_status s, const char *what) {
    if (s != RBAG_OK) throw Error(what, s);
}

Bag open(const char *path) {
    rbag_bag *raw = nullptr;
    check(rbag_open(path, &raw), path);
    return Bag(raw);
}

struct Stats {
    uint64_t count = 0;
    uint64_t bytes = 0;
    uint64_t fnv = 0xcbf29ce484222325ULL;
};

int read_bag(int argc, char **argv) {
    if (argc < 5) return 2;
    Bag bag = open(argv[2]);

    char *raw_info = nullptr;
    check(rbag_bag_info_json(bag.get(), &raw_info), "info");
    std::unique_ptr<char, StringFree> info(raw_info);
    std::printf("info %s\n", info.get());

    uint64_t count = 0, start = 0, end = 0;
    check(rbag_bag_message_count(bag.get(), &count), "message count");
    std::printf("messages %" PRIu64 "\n", count);
    rbag_status range = rbag_bag_time_range(bag.get(), &start, &end);
    if (range == RBAG_OK) {
        std::printf("range %" PRIu64 " %" PRIu64 "\n", start, end);
    } else if (range == RBAG_END) {
        std::printf("range none\n");
    } else {
        check(range, "time range");
    }

    size_t n_conns = 0;
    check(rbag_bag_connection_count(bag.get(), &n_conns), "connection count");
    std::printf("connections %zu\n", n_conns);
    for (size_t i = 0; i < n_conns; i++) {
        rbag_connection c;
        check(rbag_bag_connection(bag.get(), i, &c), "connection");
        rbag_connection again;
        check(rbag_bag_connection_by_id(bag.get(), c.id, &again), "connection by id");
        if (std::string(again.topic) != c.topic) return 1;
        std::printf("connection %" PRIu32 " %s %s %s %s %" PRIu64 " %zu\n", c.id, c.topic, c.message_type, c.encoding,
                    c.definition_encoding[0] ? c.definition_encoding : "-", c.message_count,
                    std::strlen(c.definition));
    }
    rbag_connection none;
    if (rbag_bag_connection(bag.get(), n_conns, &none) != RBAG_ERR_NOT_FOUND) return 1;

    std::vector<const char *> topics(argv + 5, argv + argc);
    rbag_filter filter{};
    filter.topics = topics.data();
    filter.topic_count = topics.size();
    if (std::string(argv[3]) != "-") {
        filter.has_start = true;
        filter.start_ns = std::strtoull(argv[3], nullptr, 10);
    }
    if (std::string(argv[4]) != "-") {
        filter.has_end = true;
        filter.end_ns = std::strtoull(argv[4], nullptr, 10);
    }
    rbag_iter *raw_it = nullptr;
    check(rbag_messages(bag.get(), &filter, &raw_it), "messages");
    Iter it(raw_it);
    bag.reset();  // the iterator keeps the bag open

    std::map<std::string, Stats> stats;
    uint64_t total = 0;
    rbag_message m;
    rbag_status s;
    while ((s = rbag_iter_next(it.get(), &m)) == RBAG_OK) {
        Stats &st = stats[m.topic];
        st.count++;
        st.bytes += m.size;
        for (size_t i = 0; i < m.size; i++) {
            st.fnv ^= m.data[i];
            st.fnv *= 0x100000001b3ULL;
        }
        total++;
    }
    if (s != RBAG_END) check(s, "next message");
    for (const auto &[topic, st] : stats) {
        std::printf("count %s %" PRIu64 " %" PRIu64 " %016" PRIx64 "\n", topic.c_str(), st.count, st.bytes, st.fnv);
    }
    std::printf("total %" PRIu64 "\n", total);
    return 0;
}

void put_u32(std::vector<uint8_t> &out, uint32_t n) {
    for (int i = 0; i < 4; i++) out.push_back(static_cast<uint8_t>(n >> (8 * i)));
}

// std_msgs/String: ROS 1 is the length and the bytes; CDR adds the encapsulation header and
// counts and stores a NUL.
std::vector<uint8_t> string_msg(const std::string &text, bool cdr) {
    std::vector<uint8_t> out;
    if (cdr) out = {0x00, 0x01, 0x00, 0x00};
    put_u32(out, static_cast<uint32_t>(text.size() + (cdr ? 1 : 0)));
    out.insert(out.end(), text.begin(), text.end());
    if (cdr) out.push_back(0);
    return out;
}

void write_strings(rbag_writer *w, uint32_t chatter, uint32_t echo, int n, bool cdr) {
    for (int i = 0; i < n; i++) {
        uint64_t t = 1000000000ULL + static_cast<uint64_t>(i) * 1000000ULL;
        auto hello = string_msg("hello " + std::to_string(i), cdr);
        check(rbag_writer_write(w, chatter, t, t - 500, hello.data(), hello.size()), "write");
        auto e = string_msg("echo " + std::to_string(i), cdr);
        check(rbag_writer_write(w, echo, t + 1, t + 1, e.data(), e.size()), "write");
    }
}

Writer create(const char *path, const char *storage, const rbag_write_options *options) {
    rbag_writer *raw = nullptr;
    check(rbag_writer_create(path, storage, options, &raw), path);
    return Writer(raw);
}

int write_bags(int argc, char **argv) {
    if (argc != 6) return 2;
    int n = std::atoi(argv[5]);
    uint32_t chatter = 0, echo = 0;

    rbag_write_options lz4{};
    lz4.compression = "lz4";
    Writer w = create(argv[2], nullptr, &lz4);
    check(rbag_writer_add_connection(w.get(), "/chatter", "std_msgs/String", &chatter), "add /chatter");
    check(rbag_writer_add_connection_with_definition(w.get(), "/echo", "std_msgs/String", nullptr, "string data\n",
                                                     nullptr, R"({"callerid": "/read_write_cpp"})", &echo),
          "add /echo");
    write_strings(w.get(), chatter, echo, n, false);
    if (rbag_writer_write(w.get(), 999, 1, 1, nullptr, 0) != RBAG_ERR_INVALID_ARGUMENT) return 1;
    check(rbag_writer_finish(w.release()), "finish");

    rbag_write_options zstd{};
    zstd.compression = "zstd";
    w = create(argv[3], "mcap", &zstd);
    check(rbag_writer_add_connection(w.get(), "/chatter", "std_msgs/msg/String", &chatter), "add /chatter");
    check(rbag_writer_add_connection_with_definition(w.get(), "/echo", "std_msgs/msg/String", "cdr", "string data\n",
                                                     "ros2msg", nullptr, &echo),
          "add /echo");
    write_strings(w.get(), chatter, echo, n, true);
    check(rbag_writer_finish(w.release()), "finish");

    // An abandoned writer (the unique_ptr's deleter) leaves nothing behind.
    {
        Writer abandoned = create(argv[4], nullptr, nullptr);
        check(rbag_writer_add_connection(abandoned.get(), "/chatter", "std_msgs/msg/String", &chatter), "add");
        write_strings(abandoned.get(), chatter, chatter, 3, true);
    }

    rbag_writer *again = nullptr;
    rbag_status s = rbag_writer_create(argv[2], nullptr, nullptr, &again);
    if (s != RBAG_ERR_EXISTS || again != nullptr) return 1;
    std::printf("wrote %d\n", n);
    return 0;
}

int open_only(int argc, char **argv) {
    if (argc != 3) return 2;
    try {
        Bag bag = open(argv[2]);
        std::printf("ok\n");
        return 0;
    } catch (const Error &) {
        // Print as the C program does.
    }
    rbag_bag *bag = nullptr;
    rbag_status s = rbag_open(argv[2], &bag);
    std::printf("error %s %s\n", rbag_status_name(s), rbag_last_error());
    return bag == nullptr ? 3 : 1;
}

}  // namespace

int main(int argc, char **argv) {
    std::printf("rbag %s, API %d\n", rbag_version(), RBAG_API_VERSION);
    try {
        std::string cmd = argc >= 2 ? argv[1] : "";
        if (cmd == "read") return read_bag(argc, argv);
        if (cmd == "write") return write_bags(argc, argv);
        if (cmd == "open") return open_only(argc, argv);
    } catch (const Error &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "usage: read_write read BAG START END [TOPIC...] | write OUT.bag OUT.mcap ABANDONED.mcap N | open PATH\n");
    return 2;
}
