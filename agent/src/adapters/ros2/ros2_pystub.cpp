// The CPython symbols that the PyPI ROS 2 wheels' librcl.so and
// librmw_fastrtps_cpp.so pull in through *__rosidl_generator_py.so (Python
// extension helpers linked without libpython). The rcl C API never calls
// them; without definitions the dynamic loader refuses to start the agent
// ("undefined symbol: PyExc_RuntimeError"). Each aborts if ever called. They
// are exported from the executable (ENABLE_EXPORTS) so that the loader finds them.
#include <cstdlib>

extern "C" {
void* PyExc_RuntimeError = nullptr;
alignas(16) char _Py_TrueStruct[64] = {};
#define MWPERF_NOT_PYTHON(name) \
  void name() { std::abort(); }
MWPERF_NOT_PYTHON(PyBool_FromLong)
MWPERF_NOT_PYTHON(PyBuffer_Release)
MWPERF_NOT_PYTHON(PyBuffer_ToContiguous)
MWPERF_NOT_PYTHON(PyBytes_FromStringAndSize)
MWPERF_NOT_PYTHON(PyErr_SetString)
MWPERF_NOT_PYTHON(PyFloat_FromDouble)
MWPERF_NOT_PYTHON(PyImport_ImportModule)
MWPERF_NOT_PYTHON(PyList_New)
MWPERF_NOT_PYTHON(PyList_SetItem)
MWPERF_NOT_PYTHON(PyLong_AsLong)
MWPERF_NOT_PYTHON(PyLong_AsLongLong)
MWPERF_NOT_PYTHON(PyLong_AsSize_t)
MWPERF_NOT_PYTHON(PyLong_AsUnsignedLong)
MWPERF_NOT_PYTHON(PyLong_AsUnsignedLongLong)
MWPERF_NOT_PYTHON(PyLong_FromLong)
MWPERF_NOT_PYTHON(PyLong_FromLongLong)
MWPERF_NOT_PYTHON(PyLong_FromUnsignedLong)
MWPERF_NOT_PYTHON(PyLong_FromUnsignedLongLong)
MWPERF_NOT_PYTHON(PyObject_CallFunctionObjArgs)
MWPERF_NOT_PYTHON(PyObject_CallObject)
MWPERF_NOT_PYTHON(PyObject_CheckBuffer)
MWPERF_NOT_PYTHON(PyObject_GetAttrString)
MWPERF_NOT_PYTHON(PyObject_GetBuffer)
MWPERF_NOT_PYTHON(PyObject_SetAttrString)
MWPERF_NOT_PYTHON(PyObject_Size)
MWPERF_NOT_PYTHON(PySequence_Fast)
MWPERF_NOT_PYTHON(PySequence_Size)
MWPERF_NOT_PYTHON(PyUnicode_AsUTF8String)
MWPERF_NOT_PYTHON(PyUnicode_DecodeUTF8)
MWPERF_NOT_PYTHON(_Py_Dealloc)
}
