/*
 * compat_windows.h — the POSIX names the library's portable files use that
 * the mingw-w64 C runtime spells differently, given once for every file of
 * a Windows build (CMakeLists.txt force-includes it; nothing includes it by
 * name). Each is the runtime's own equivalent, never an empty stand-in:
 * O_CLOEXEC is "not inherited by children" (_O_NOINHERIT) and also binary
 * (_O_BINARY), since every file the library opens with it is binary
 * (captures, journals, dumps) and the runtime's default text mode would
 * rewrite their bytes.
 *
 * Must never: define a name whose Windows meaning differs from its POSIX
 * one, or add OS-specific behaviour (that belongs in the platform's .c
 * files).
 */
#ifndef STROBE_PLATFORM_COMPAT_WINDOWS_H
#define STROBE_PLATFORM_COMPAT_WINDOWS_H

/* C99's printf and scanf (%zu, %lld, %Lf, %a) instead of msvcrt's, before
 * any header reads it. */
#define __USE_MINGW_ANSI_STDIO 1

#include <fcntl.h>
#include <sys/stat.h>

/* The format checks of functions that print with it: GCC's "printf" is
 * msvcrt's on this target, gnu_printf the C99 one just chosen. */
#define STROBE__PRINTF gnu_printf

#define O_CLOEXEC (_O_NOINHERIT | _O_BINARY)

/* The C runtime's stat never reports a socket (Windows keeps none in its
 * file system as POSIX does), so no mode is one. */
#define S_ISSOCK(m) 0

/* ELF's hidden visibility has no PE equivalent: a DLL exports what it is
 * told to (here, by mingw's ld, every global symbol), so it is left out. */
#define STROBE__HIDDEN

#endif
