#ifndef CHUTE_CQPDF_SHIM_H
#define CHUTE_CQPDF_SHIM_H

// qpdf's C API (not its C++ classes, which Swift cannot import as simply): a qpdf_data handle per document, object
// handles for pages and dictionaries, reading from and writing to memory.
#include <qpdf/qpdf-c.h>

#endif
