/* bcryptprimitives.dll for wine 8.0, which lacks it: Rust's std (1.78 and
 * later) imports ProcessPrng from it for its random numbers (HashMap
 * keys), and a program that cannot load it exits with code 53 before
 * main. ProcessPrng fills a buffer and always succeeds; this one asks
 * advapi32's RtlGenRandom, which wine has. Built by
 * scripts/ci_platforms.sh into the wine prefix's system32. */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
