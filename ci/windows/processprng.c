/* bcryptprimitives.dll with the one function Rust's standard library needs from it.

   Rust's std (1.78 and later) takes its random bytes (HashMap's seeds) from
   bcryptprimitives.dll!ProcessPrng, imported at load time, so every Rust program links it.
   Wine 8.0 (Debian 12) ships no ProcessPrng: the loader cannot resolve the import and every
   Rust .exe exits 53 before main. This DLL, copied into the wine prefix's system32 (and
   preferred to wine's own copy by WINEDLLOVERRIDES=bcryptprimitives=n,b), provides it on
   top of RtlGenRandom (advapi32!SystemFunction036), which wine has. For CI under wine
   only: it is never shipped. (mozilla/glean worked around the same gap the same way.)

   Build: x86_64-w64-mingw32-gcc -shared -O2 -s -o bcryptprimitives.dll processprng.c
*/
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* Windows' ProcessPrng always succeeds; so does this, for buffers of any size (RtlGenRandom
   takes a ULONG length, so a larger request is filled in pieces). */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG piece = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, piece))
            return FALSE;
        data += piece;
        length -= piece;
    }
    return TRUE;
}
