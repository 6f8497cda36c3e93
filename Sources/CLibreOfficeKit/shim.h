#ifndef CHUTE_CLIBREOFFICEKIT_SHIM_H
#define CHUTE_CLIBREOFFICEKIT_SHIM_H

// LibreOfficeKit's C interface (libreofficekit-dev). It links nothing: `lok_init_2`, a static function of
// LibreOfficeKitInit.h, loads LibreOffice's merged library from its install folder with dlopen.
// LibreOfficeKit.h uses `bool` without including <stdbool.h>.
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <LibreOfficeKit/LibreOfficeKitInit.h>
#include <LibreOfficeKit/LibreOfficeKit.h>

// The function tables are structs of function pointers that Swift imports as optionals; these name the calls Chute
// makes, so that the Swift side reads as calls and a missing entry is a NULL check here.

/// LibreOffice's last error message (to be freed with `chute_lok_free_error`), or NULL.
static inline char *chute_lok_get_error(LibreOfficeKit *office) {
    return office->pClass->getError ? office->pClass->getError(office) : NULL;
}

static inline void chute_lok_free_error(LibreOfficeKit *office, char *message) {
    if (office->pClass->freeError) {
        office->pClass->freeError(message);
    } else {
        free(message);
    }
}

static inline char *chute_lok_version_info(LibreOfficeKit *office) {
    return office->pClass->getVersionInfo ? office->pClass->getVersionInfo(office) : NULL;
}

static inline LibreOfficeKitDocument *chute_lok_document_load(LibreOfficeKit *office, const char *url,
                                                              const char *options) {
    return office->pClass->documentLoadWithOptions(office, url, options);
}

static inline int chute_lok_document_save_as(LibreOfficeKitDocument *document, const char *url, const char *format,
                                             const char *filter_options) {
    return document->pClass->saveAs(document, url, format, filter_options);
}

static inline int chute_lok_document_type(LibreOfficeKitDocument *document) {
    return document->pClass->getDocumentType(document);
}

static inline void chute_lok_document_destroy(LibreOfficeKitDocument *document) {
    document->pClass->destroy(document);
}

#endif
