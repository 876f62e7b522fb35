/* launch.exe: runs one Windows program under wine the way a Windows host would, for the
   tests of baton's Windows build (ci/windows/run.sh is its front end; README.md beside it).

   Why a helper inside wine, not `wine program.exe` with the environment set on Linux:
   - wine replaces USERPROFILE, TEMP, TMP (and APPDATA, ...) in the first Windows process
     it starts, whatever the Linux environment says; a Windows parent's CreateProcess
     passes its environment through unchanged, so this helper sets it, then starts the
     program;
   - stdin: a Linux pipe handed to a Windows program is not a Windows pipe (PeekNamedPipe
     fails on it); with --stdin-pipe the program gets a real anonymous pipe, fed from this
     helper's stdin, and --stdin-hold-ms keeps its write end open after that (a host that
     never closes stdin) to test a stdin deadline.

   launch.exe [options] -- program [arguments...]
     --clean-env           start from Windows' own variables only (SystemRoot, PATH, ...)
     --set NAME=VALUE      set a variable (after --clean-env, whatever the order)
     --unset NAME          remove a variable
     --cd DIR              the program's working directory
     --stdin-pipe          stdin is a Windows pipe fed from this helper's stdin
     --stdin-hold-ms N     keep that pipe open N ms after this helper's stdin ends
                           (-1: until the program exits)
   Exits with the program's exit code; 120-125 are the helper's own failures. The program
   ends with this helper (a job object), its own children do not.
*/
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

/* The variables a Windows process has of its own (what --clean-env keeps). */
static const wchar_t *const windows_own[] = {
    L"ALLUSERSPROFILE", L"COMPUTERNAME", L"ComSpec", L"CommonProgramFiles",
    L"CommonProgramFiles(x86)", L"CommonProgramW6432", L"NUMBER_OF_PROCESSORS", L"OS",
    L"PATH", L"PATHEXT", L"PROCESSOR_ARCHITECTURE", L"PROCESSOR_IDENTIFIER",
    L"PROCESSOR_LEVEL", L"PROCESSOR_REVISION", L"ProgramData", L"ProgramFiles",
    L"ProgramFiles(x86)", L"ProgramW6432", L"PUBLIC", L"SystemDrive", L"SystemRoot",
    L"windir", L"WINEDEBUG", L"WINEDLLOVERRIDES",
};

static int usage(const wchar_t *why)
{
    fwprintf(stderr, L"launch.exe: %ls\nusage: launch.exe [--clean-env] [--set NAME=VALUE]... "
                     L"[--unset NAME]... [--cd DIR] [--stdin-pipe [--stdin-hold-ms N]] -- program [args...]\n",
             why);
    return 120;
}

static void clean_environment(void)
{
    wchar_t *block = GetEnvironmentStringsW();
    /* Collect the names first: removing while walking the block would change it. */
    size_t count = 0, capacity = 64;
    wchar_t **names = malloc(capacity * sizeof *names);
    for (wchar_t *entry = block; *entry; entry += wcslen(entry) + 1) {
        const wchar_t *equals = wcschr(entry + 1, L'='); /* "=C:=C:\\" entries start with '=' */
        if (!equals)
            continue;
        size_t length = (size_t)(equals - entry);
        int keep = entry[0] == L'=';
        for (size_t i = 0; !keep && i < sizeof windows_own / sizeof *windows_own; i++)
            keep = wcslen(windows_own[i]) == length && _wcsnicmp(windows_own[i], entry, length) == 0;
        if (keep)
            continue;
        if (count == capacity)
            names = realloc(names, (capacity *= 2) * sizeof *names);
        names[count] = calloc(length + 1, sizeof(wchar_t));
        wmemcpy(names[count++], entry, length);
    }
    FreeEnvironmentStringsW(block);
    for (size_t i = 0; i < count; i++) {
        SetEnvironmentVariableW(names[i], NULL);
        free(names[i]);
    }
    free(names);
}

/* Appends one argument to a command line, quoted so CommandLineToArgvW (and Rust's std)
   read it back unchanged: backslashes double only before a quote. */
static void append_argument(wchar_t *line, const wchar_t *argument)
{
    int plain = *argument != 0 && wcspbrk(argument, L" \t\n\v\"") == NULL;
    if (*line)
        wcscat(line, L" ");
    if (plain) {
        wcscat(line, argument);
        return;
    }
    wchar_t *out = line + wcslen(line);
    *out++ = L'"';
    for (const wchar_t *p = argument;; p++) {
        size_t backslashes = 0;
        while (*p == L'\\') {
            backslashes++;
            p++;
        }
        if (*p == 0) {
            for (size_t i = 0; i < backslashes * 2; i++)
                *out++ = L'\\';
            break;
        }
        size_t repeat = *p == L'"' ? backslashes * 2 + 1 : backslashes;
        for (size_t i = 0; i < repeat; i++)
            *out++ = L'\\';
        *out++ = *p;
    }
    *out++ = L'"';
    *out = 0;
}

struct feed {
    HANDLE from, to;
    long hold_ms;
    HANDLE child;
};

/* Copies this helper's stdin into the program's pipe, then closes it (after the hold). */
static DWORD WINAPI feed_stdin(void *argument)
{
    struct feed *feed = argument;
    char buffer[65536];
    DWORD got, put;
    while (feed->from != INVALID_HANDLE_VALUE && feed->from != NULL &&
           ReadFile(feed->from, buffer, sizeof buffer, &got, NULL) && got > 0) {
        if (!WriteFile(feed->to, buffer, got, &put, NULL))
            break; /* the program closed its end: nothing more to give it */
    }
    if (feed->hold_ms != 0)
        WaitForSingleObject(feed->child, feed->hold_ms < 0 ? INFINITE : (DWORD)feed->hold_ms);
    CloseHandle(feed->to);
    return 0;
}

int wmain(int argc, wchar_t **argv)
{
    int clean = 0, stdin_pipe = 0, i = 1;
    long hold_ms = 0;
    const wchar_t *directory = NULL;
    for (; i < argc && wcscmp(argv[i], L"--") != 0; i++) {
        if (wcscmp(argv[i], L"--clean-env") == 0)
            clean = 1;
        else if (wcscmp(argv[i], L"--stdin-pipe") == 0)
            stdin_pipe = 1;
        else if (i + 1 >= argc)
            return usage(L"an option without its value");
        else if (wcscmp(argv[i], L"--set") == 0 || wcscmp(argv[i], L"--unset") == 0)
            i++; /* applied below, after --clean-env */
        else if (wcscmp(argv[i], L"--cd") == 0)
            directory = argv[++i];
        else if (wcscmp(argv[i], L"--stdin-hold-ms") == 0)
            hold_ms = wcstol(argv[++i], NULL, 10);
        else
            return usage(L"an unknown option");
    }
    if (i + 1 >= argc)
        return usage(L"no program after --");
    if (clean)
        clean_environment();
    for (int j = 1; j < i; j++) {
        if (wcscmp(argv[j], L"--set") == 0) {
            wchar_t *equals = wcschr(argv[++j], L'=');
            if (!equals || equals == argv[j])
                return usage(L"--set needs NAME=VALUE");
            *equals = 0;
            SetEnvironmentVariableW(argv[j], equals + 1);
        } else if (wcscmp(argv[j], L"--unset") == 0) {
            SetEnvironmentVariableW(argv[++j], NULL);
        } else if (wcscmp(argv[j], L"--cd") == 0 || wcscmp(argv[j], L"--stdin-hold-ms") == 0) {
            j++;
        }
    }

    size_t size = 1;
    for (int j = i + 1; j < argc; j++)
        size += wcslen(argv[j]) * 2 + 3;
    wchar_t *line = calloc(size, sizeof(wchar_t));
    for (int j = i + 1; j < argc; j++)
        append_argument(line, argv[j]);

    STARTUPINFOW startup = {.cb = sizeof startup};
    HANDLE pipe_read = NULL, pipe_write = NULL;
    if (stdin_pipe) {
        SECURITY_ATTRIBUTES inheritable = {.nLength = sizeof inheritable, .bInheritHandle = TRUE};
        if (!CreatePipe(&pipe_read, &pipe_write, &inheritable, 0))
            return fwprintf(stderr, L"launch.exe: CreatePipe failed (%lu)\n", GetLastError()), 121;
        SetHandleInformation(pipe_write, HANDLE_FLAG_INHERIT, 0);
        startup.dwFlags = STARTF_USESTDHANDLES;
        startup.hStdInput = pipe_read;
        startup.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
        startup.hStdError = GetStdHandle(STD_ERROR_HANDLE);
    }
    /* The program runs in a job that ends it when this helper's handles close: a test
       harness that kills the wine process running this helper ends the program too. Its
       own children break away silently, as a host's do (Node's libuv sets the same). */
    HANDLE job = CreateJobObjectW(NULL, NULL);
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits = {0};
    limits.BasicLimitInformation.LimitFlags =
        JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK;
    if (!job || !SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof limits))
        return fwprintf(stderr, L"launch.exe: no job object (error %lu)\n", GetLastError()), 124;
    PROCESS_INFORMATION child;
    if (!CreateProcessW(NULL, line, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, directory, &startup, &child)) {
        fwprintf(stderr, L"launch.exe: cannot start %ls (error %lu)\n", argv[i + 1], GetLastError());
        return 122;
    }
    if (!AssignProcessToJobObject(job, child.hProcess)) {
        fwprintf(stderr, L"launch.exe: cannot put %ls in its job (error %lu)\n", argv[i + 1], GetLastError());
        TerminateProcess(child.hProcess, 125);
        return 125;
    }
    ResumeThread(child.hThread);
    CloseHandle(child.hThread);
    HANDLE feeder = NULL;
    if (stdin_pipe) {
        CloseHandle(pipe_read);
        static struct feed feed;
        feed = (struct feed){GetStdHandle(STD_INPUT_HANDLE), pipe_write, hold_ms, child.hProcess};
        feeder = CreateThread(NULL, 0, feed_stdin, &feed, 0, NULL);
    }
    WaitForSingleObject(child.hProcess, INFINITE);
    DWORD code = 123;
    GetExitCodeProcess(child.hProcess, &code);
    (void)feeder; /* a feeder still blocked on our stdin ends with the process */
    return (int)code;
}
