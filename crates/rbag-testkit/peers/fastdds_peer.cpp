// A Fast DDS (eProsima, Debian's libfastrtps-dev 2.9: the stack of rmw_fastrtps) ROS 2 wire peer
// for rbag's tests: std_msgs/msg/String on a ROS 2 topic, with no ROS 2 installed. Unicast on
// 127.0.0.1 only (no multicast, no shared memory), so it finds Cyclone participants the way the
// loopback Cyclone config finds it.
//
//   fastdds_peer pub DOMAIN TOPIC COUNT   # waits for a reader, publishes "hello 0".., waits for acks
//   fastdds_peer sub DOMAIN TOPIC COUNT   # prints RECEIVED <data> per sample until COUNT came
//
// Output, one line each, flushed: READY, MATCHED, PUBLISHED <i> / RECEIVED <data>, DONE <n>.
// Exit 0 on success, 2 on a timeout (60 s).
#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

using namespace eprosima::fastdds::dds;
using eprosima::fastcdr::Cdr;
using eprosima::fastcdr::FastBuffer;
using eprosima::fastrtps::rtps::SerializedPayload_t;

struct StringMsg {
    std::string data;
};

// std_msgs::msg::dds_::String_ as rosidl generates it: one CDR string.
class StringType : public TopicDataType {
public:
    StringType() {
        setName("std_msgs::msg::dds_::String_");
        m_typeSize = 4 + 4 + (1 << 16);
        m_isGetKeyDefined = false;
    }
    bool serialize(void* data, SerializedPayload_t* payload) override {
        auto* m = static_cast<StringMsg*>(data);
        FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->max_size);
        Cdr ser(fb, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
        payload->encapsulation = ser.endianness() == Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
        ser.serialize_encapsulation();
        ser << m->data;
        payload->length = static_cast<uint32_t>(ser.getSerializedDataLength());
        return true;
    }
    bool deserialize(SerializedPayload_t* payload, void* data) override {
        auto* m = static_cast<StringMsg*>(data);
        FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->length);
        Cdr de(fb, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
        try {
            de.read_encapsulation();
            de >> m->data;
        } catch (...) {
            return false;
        }
        return true;
    }
    std::function<uint32_t()> getSerializedSizeProvider(void* data) override {
        auto* m = static_cast<StringMsg*>(data);
        return [m]() { return static_cast<uint32_t>(4 + 4 + m->data.size() + 1 + 3); };
    }
    void* createData() override { return new StringMsg(); }
    void deleteData(void* data) override { delete static_cast<StringMsg*>(data); }
    bool getKey(void*, eprosima::fastrtps::rtps::InstanceHandle_t*, bool) override { return false; }
};

static void say(const std::string& s) {
    std::printf("%s\n", s.c_str());
    std::fflush(stdout);
}

static DomainParticipant* join(int domain) {
    DomainParticipantQos q;
    q.name("fastdds_peer");
    q.transport().use_builtin_transports = false;
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.push_back("127.0.0.1");
    udp->maxInitialPeersRange = 32;  // Cyclone's loopback config numbers participants up to 32
    q.transport().user_transports.push_back(udp);
    eprosima::fastrtps::rtps::Locator_t peer;
    eprosima::fastrtps::rtps::IPLocator::setIPv4(peer, 127, 0, 0, 1);
    q.wire_protocol().builtin.initialPeersList.push_back(peer);
    q.wire_protocol().builtin.metatrafficMulticastLocatorList.clear();
    return DomainParticipantFactory::get_instance()->create_participant(domain, q);
}

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: fastdds_peer pub|sub DOMAIN TOPIC COUNT\n");
        return 64;
    }
    std::string mode = argv[1], topic_name = argv[3];
    int domain = std::atoi(argv[2]), count = std::atoi(argv[4]);
    DomainParticipant* p = join(domain);
    if (!p) {
        say("NO_PARTICIPANT");
        return 1;
    }
    TypeSupport type(new StringType());
    type.register_type(p);
    Topic* topic = p->create_topic(topic_name, type.get_type_name(), TOPIC_QOS_DEFAULT);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto alive = [&] { return std::chrono::steady_clock::now() < deadline; };
    if (mode == "pub") {
        Publisher* pubr = p->create_publisher(PUBLISHER_QOS_DEFAULT);
        DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
        wq.reliability().kind = RELIABLE_RELIABILITY_QOS;
        wq.durability().kind = VOLATILE_DURABILITY_QOS;
        wq.history().kind = KEEP_ALL_HISTORY_QOS;
        DataWriter* w = pubr->create_datawriter(topic, wq);
        say("READY");
        PublicationMatchedStatus st;
        while (alive() && (w->get_publication_matched_status(st), st.current_count == 0)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (!alive()) {
            say("NO_MATCH");
            return 2;
        }
        say("MATCHED");
        for (int i = 0; i < count; ++i) {
            StringMsg m{"hello " + std::to_string(i)};
            w->write(&m);
            say("PUBLISHED " + std::to_string(i));
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        w->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(30, 0));
        say("DONE " + std::to_string(count));
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    } else {
        Subscriber* subr = p->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
        DataReaderQos rq = DATAREADER_QOS_DEFAULT;
        rq.reliability().kind = RELIABLE_RELIABILITY_QOS;
        rq.history().kind = KEEP_ALL_HISTORY_QOS;
        DataReader* r = subr->create_datareader(topic, rq);
        say("READY");
        int got = 0;
        bool matched = false;
        while (alive() && got < count) {
            SubscriptionMatchedStatus st;
            if (!matched && (r->get_subscription_matched_status(st), st.current_count > 0)) {
                matched = true;
                say("MATCHED");
            }
            StringMsg m;
            SampleInfo info;
            while (r->take_next_sample(&m, &info) == ReturnCode_t::RETCODE_OK) {
                if (info.valid_data) {
                    say("RECEIVED " + m.data);
                    ++got;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        say("DONE " + std::to_string(got));
        if (got < count) return 2;
    }
    DomainParticipantFactory::get_instance()->delete_participant(p);
    return 0;
}
