// The part of RTI Connector's C API and of the Connext 6.1.2 C API that the
// connext adapter calls. rticonnextdds-connector ships the libraries and no
// headers: each declaration follows the documented signature (the Connector's
// own bindings declare the RTI_Connector_* functions the same way, e.g.
// rticonnextdds_connector.py; the DDS_* ones are RTI's C API reference). The
// handles are opaque; the few structures read here are declared with their
// documented members in their documented order, and those whose size alone
// matters (sequences) are storage that open() checks is large enough.
#pragma once
#include <cstdint>
#include <cstdio>

extern "C" {

// --- RTI Connector ---------------------------------------------------------
struct RTI_Connector_Options {
  int enable_on_data_event;         // the Connector's own data-available listener (the adapter sets its own)
  int one_based_sequence_indexing;  // indices of the *_from_sample calls
};
void* RTI_Connector_new(const char* config_name, const char* config_file, const RTI_Connector_Options* options);
void RTI_Connector_delete(void* self);
void* RTI_Connector_get_datawriter(void* self, const char* entity_name);  // a DDS_DynamicDataWriter*
void* RTI_Connector_get_datareader(void* self, const char* entity_name);  // a DDS_DynamicDataReader*
// The output's sample (a DDS_DynamicData*), which RTI_Connector_write would write.
int RTI_Connector_get_native_instance(void* self, const char* entity_name, void** instance);
// Static strings naming the builds: "NDDSCORE_BUILD_6.1.2.21_<date>_RTI_REL\nNDDSC_BUILD_...",
// "RTICONNECTOR_BUILD_6.1.2.21_<date>_RTI_REL"; 0 (DDS_RETCODE_OK) on success.
int RTI_Connector_get_build_versions(const char** core_version, const char** connector_version);

// --- Connext C API: basic types ---------------------------------------------
typedef int32_t DDS_ReturnCode_t;
typedef unsigned char DDS_Boolean;
struct DDS_Duration_t {
  int32_t sec;
  uint32_t nanosec;
};
struct DDS_InstanceHandle_t {  // 24 bytes, as DDS_HANDLE_NIL
  unsigned char key_hash[16];
  uint32_t length;
  DDS_Boolean is_valid;
};
extern const DDS_InstanceHandle_t DDS_HANDLE_NIL;

constexpr DDS_ReturnCode_t DDS_RETCODE_OK = 0;
constexpr DDS_ReturnCode_t DDS_RETCODE_TIMEOUT = 10;
constexpr DDS_ReturnCode_t DDS_RETCODE_NO_DATA = 11;
constexpr uint32_t DDS_ANY_STATE = 0xffff;  // sample, view and instance state masks
constexpr uint32_t DDS_DATA_AVAILABLE_STATUS = 1u << 10;
constexpr int32_t DDS_LENGTH_UNLIMITED = -1;
constexpr DDS_Duration_t DDS_DURATION_INFINITE = {0x7fffffff, 0x7fffffffu};

// --- statuses: the documented members, in order ----------------------------
struct DDS_PublicationMatchedStatus {
  int32_t total_count, total_count_change, current_count, current_count_peak, current_count_change;
  DDS_InstanceHandle_t last_subscription_handle;
};
struct DDS_SubscriptionMatchedStatus {
  int32_t total_count, total_count_change, current_count, current_count_peak, current_count_change;
  DDS_InstanceHandle_t last_publication_handle;
};
struct DDS_SampleRejectedStatus {
  int32_t total_count, total_count_change;
  int32_t last_reason;
  DDS_InstanceHandle_t last_instance_handle;
};
// The leading members of DDS_SampleInfo up to valid_data (the structure goes
// on; it is only ever read through pointers Connext hands out).
struct DDS_SampleInfoHead {
  uint32_t sample_state, view_state, instance_state;
  DDS_Duration_t source_timestamp;  // a DDS_Time_t: {sec, nanosec}
  DDS_InstanceHandle_t instance_handle, publication_handle;
  int32_t disposed_generation_count, no_writers_generation_count, sample_rank, generation_rank,
      absolute_generation_rank;
  DDS_Boolean valid_data;
};

// --- DynamicData: the sample and its writer and reader ----------------------
DDS_ReturnCode_t DDS_DynamicData_set_octet_array(void* self, const char* member_name, int32_t member_id,
                                                 uint32_t length, const unsigned char* array);
DDS_ReturnCode_t DDS_DynamicData_get_octet_array(void* self, unsigned char* array, uint32_t* length,
                                                 const char* member_name, int32_t member_id);
DDS_ReturnCode_t DDS_DynamicData_set_ulong(void* self, const char* member_name, int32_t member_id, uint32_t value);
DDS_ReturnCode_t DDS_DynamicDataWriter_write(void* self, const void* instance_data, const DDS_InstanceHandle_t* handle);
DDS_ReturnCode_t DDS_DynamicDataReader_take(void* self, void* received_data, void* info_seq, int32_t max_samples,
                                            uint32_t sample_states, uint32_t view_states, uint32_t instance_states);
DDS_ReturnCode_t DDS_DynamicDataReader_return_loan(void* self, void* received_data, void* info_seq);
void* DDS_DynamicDataReader_as_datareader(void* self);  // a DDS_DataReader*
void* DDS_DynamicDataWriter_as_datawriter(void* self);  // a DDS_DataWriter*

// Sequences (struct DDS_DynamicDataSeq, DDS_SampleInfoSeq, DDS_ConditionSeq) in storage of ours.
DDS_Boolean DDS_DynamicDataSeq_initialize(void* self);
DDS_Boolean DDS_DynamicDataSeq_finalize(void* self);
int32_t DDS_DynamicDataSeq_get_length(const void* self);
void* DDS_DynamicDataSeq_get_reference(const void* self, int32_t i);
DDS_Boolean DDS_SampleInfoSeq_initialize(void* self);
DDS_Boolean DDS_SampleInfoSeq_finalize(void* self);
const DDS_SampleInfoHead* DDS_SampleInfoSeq_get_reference(const void* self, int32_t i);
DDS_Boolean DDS_ConditionSeq_initialize(void* self);
DDS_Boolean DDS_ConditionSeq_finalize(void* self);

// --- entities ----------------------------------------------------------------
DDS_ReturnCode_t DDS_DataWriter_get_publication_matched_status(void* self, DDS_PublicationMatchedStatus* status);
DDS_ReturnCode_t DDS_DataReader_get_subscription_matched_status(void* self, DDS_SubscriptionMatchedStatus* status);
DDS_ReturnCode_t DDS_DataReader_get_sample_rejected_status(void* self, DDS_SampleRejectedStatus* status);
DDS_ReturnCode_t DDS_DataWriter_wait_for_acknowledgments(void* self, const DDS_Duration_t* max_wait);
DDS_ReturnCode_t DDS_DataWriter_flush(void* self);

// A data reader's listener: listener_data, then the callbacks in the order of
// the DDS specification (8 pointers, as DDS_DATAREADER_LISTENER_GLOBAL).
typedef void (*DDS_DataReaderCallback)(void* listener_data, void* reader, const void* status);
typedef void (*DDS_DataAvailableCallback)(void* listener_data, void* reader);
struct DDS_DataReaderListener {
  void* listener_data;
  DDS_DataReaderCallback on_requested_deadline_missed, on_requested_incompatible_qos, on_sample_rejected,
      on_liveliness_changed;
  DDS_DataAvailableCallback on_data_available;
  DDS_DataReaderCallback on_subscription_matched, on_sample_lost;
};
DDS_ReturnCode_t DDS_DataReader_set_listener(void* self, const DDS_DataReaderListener* listener, uint32_t mask);

// Wait sets and conditions. A read or guard condition is a DDS_Condition (the
// C API's *_as_condition are casts).
void* DDS_WaitSet_new(void);
DDS_ReturnCode_t DDS_WaitSet_delete(void* self);
DDS_ReturnCode_t DDS_WaitSet_attach_condition(void* self, void* condition);
DDS_ReturnCode_t DDS_WaitSet_detach_condition(void* self, void* condition);
DDS_ReturnCode_t DDS_WaitSet_wait(void* self, void* active_conditions, const DDS_Duration_t* timeout);
void* DDS_DataReader_create_readcondition(void* self, uint32_t sample_states, uint32_t view_states,
                                          uint32_t instance_states);
DDS_ReturnCode_t DDS_DataReader_delete_readcondition(void* self, void* condition);
void* DDS_GuardCondition_new(void);
DDS_ReturnCode_t DDS_GuardCondition_delete(void* self);
DDS_ReturnCode_t DDS_GuardCondition_set_trigger_value(void* self, DDS_Boolean value);
DDS_Boolean DDS_Condition_get_trigger_value(void* self);

// --- logging and versions ----------------------------------------------------
void* NDDS_Config_Logger_get_instance(void);
DDS_Boolean NDDS_Config_Logger_set_output_file(void* self, FILE* out);
struct NDDS_Config_ProductVersion_t {  // Connext's version: 6.1.2.21 = {6, 1, 2, 21}
  char major;
  char minor;
  char release;
  char revision;
};
const NDDS_Config_ProductVersion_t* NDDS_Config_Version_get_product_version(void);

}  // extern "C"
