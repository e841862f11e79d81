; SearchDesk for Windows: a per-user installer (no administrator rights, nothing outside the user's profile).
;
; Compiled by packaging/build_windows.py (or by hand):
;   makensis -DVERSION=0.1.0 -DVERSION4=0.1.0.0 -DPAYLOAD=<folder with searchdesk.exe, searchdesk-server.exe, _internal>
;            -DICON=assets/searchdesk.ico -DOUTFILE=dist/SearchDesk-0.1.0-setup.exe [-DSIGN_CMD="signtool sign ..."]
;            packaging/installer.nsi
; CI compiles it on Linux with Debian's makensis against a dummy payload (build_windows.py --dummy-payload).
;
; What it does:
;   install   - copies the app to %LOCALAPPDATA%\Programs\SearchDesk, adds a Start menu shortcut, registers the
;               uninstaller under HKCU, and (optional, off by default) starts SearchDesk at sign-in.
;   uninstall - asks the app to sign out first (`searchdesk.exe --uninstall-cleanup`: revoke the Google token,
;               clear the keyring entry and its autostart entry, quit a running copy), then removes the same
;               things itself in case the app could not: the autostart value, the Credential Manager entry,
;               the shortcut, the notification identity (AppUserModelID), the files and the uninstall key.
;
; Documentation followed:
;   NSIS 3 reference (RequestExecutionLevel, SetShellVarContext, !finalize, !uninstfinalize):
;     https://nsis.sourceforge.io/Docs/Chapter4.html  and  https://nsis.sourceforge.io/Docs/Chapter5.html
;   Modern UI 2: https://nsis.sourceforge.io/Docs/Modern%20UI%202/Readme.html
;   Per-user install folder (FOLDERID_UserProgramFiles = %LOCALAPPDATA%\Programs):
;     https://learn.microsoft.com/en-us/windows/win32/shell/knownfolderid
;   Uninstall registry key: https://learn.microsoft.com/en-us/windows/win32/msi/uninstall-registry-key
;   Run key (autostart): https://learn.microsoft.com/en-us/windows/win32/setupapi/run-and-runonce-registry-keys
;   cmdkey: https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/cmdkey

!ifndef VERSION
  !error "Pass -DVERSION=x.y.z"
!endif
!ifndef VERSION4
  !error "Pass -DVERSION4=x.y.z.0 (four numbers, for the file's version resource)"
!endif
!ifndef PAYLOAD
  !error "Pass -DPAYLOAD=<folder holding searchdesk.exe, searchdesk-server.exe and _internal>"
!endif
!ifndef OUTFILE
  !error "Pass -DOUTFILE=<installer path>"
!endif
!ifndef ICON
  !error "Pass -DICON=<path to searchdesk.ico>"
!endif

!define APP "SearchDesk"
!define UNINST_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\SearchDesk"
; The same value the app writes from its own setting (searchdesk_desktop/lifecycle/autostart.py RUN_VALUE), so either
; side can remove what the other added.
!define RUN_KEY "Software\Microsoft\Windows\CurrentVersion\Run"
!define RUN_VALUE "SearchDesk"
; keyring's Windows backend stores the sign-in as a generic credential whose target is the service name
; (searchdesk_desktop/accounts/keystore.py SERVICE) or "<entry>@<service>".
!define CRED_TARGET "searchdesk"
!define CRED_TARGET_COMPOUND "google-sign-in@searchdesk"
; The app's notification identity: desktop-notifier registers the AppUserModelID "SearchDesk" (the
; searchdesk_desktop/notices/channel.py APP_NAME), its display name and icon here each time the app starts, which is
; what Windows needs to show an unpackaged app's toasts. So no NSIS plug-in sets an AUMID on the shortcut.
!define AUMID_KEY "Software\Classes\AppUserModelId\SearchDesk"

Unicode true
ManifestDPIAware true
RequestExecutionLevel user
SetCompressor /SOLID lzma
Name "${APP}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\${APP}"
BrandingText "${APP} ${VERSION}"
ShowInstDetails show
ShowUninstDetails show

!ifdef SIGN_CMD
  ; Sign the installer and the uninstaller it embeds, as the last step of compiling each.
  !finalize '${SIGN_CMD} "%1"' = 0
  !uninstfinalize '${SIGN_CMD} "%1"' = 0
!endif

VIProductVersion "${VERSION4}"
VIFileVersion "${VERSION4}"
VIAddVersionKey "ProductName" "${APP}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "${APP} installer"
VIAddVersionKey "CompanyName" "${APP}"
VIAddVersionKey "LegalCopyright" "Apache-2.0"

!include "MUI2.nsh"
!include "LogicLib.nsh"
!include "FileFunc.nsh"

!define MUI_ICON "${ICON}"
!define MUI_UNICON "${ICON}"
!define MUI_ABORTWARNING
!define MUI_COMPONENTSPAGE_NODESC
!define MUI_FINISHPAGE_RUN "$INSTDIR\searchdesk.exe"
!define MUI_FINISHPAGE_RUN_TEXT "Start ${APP} now"

!insertmacro MUI_PAGE_COMPONENTS
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

; --- shared helpers ------------------------------------------------------------------------------

; Claude Desktop keeps searchdesk-server.exe running while it is open, which locks the files we replace.
!macro WAIT_FOR_SERVER un
Function ${un}WaitForServer
  retry:
    nsExec::ExecToStack 'cmd.exe /c tasklist /FI "IMAGENAME eq searchdesk-server.exe" /NH | find /I "searchdesk-server.exe"'
    Pop $0
    Pop $1
    ${If} $0 == 0
      MessageBox MB_RETRYCANCEL|MB_ICONEXCLAMATION "Claude Desktop (or another program) is using SearchDesk's server.$\r$\n$\r$\nQuit Claude Desktop, then click Retry." /SD IDCANCEL IDRETRY retry
      Abort "SearchDesk's server is in use; quit Claude Desktop and run this again."
    ${EndIf}
FunctionEnd
!macroend
!insertmacro WAIT_FOR_SERVER ""
!insertmacro WAIT_FOR_SERVER "un."

; Ask a running SearchDesk to quit (it holds its files open), then insist.
!macro CLOSE_APP un
Function ${un}CloseApp
  ReadEnvStr $1 USERNAME
  nsExec::Exec 'taskkill /IM searchdesk.exe /FI "USERNAME eq $1"'
  Pop $0
  Sleep 1500
  nsExec::Exec 'taskkill /F /IM searchdesk.exe /FI "USERNAME eq $1"'
  Pop $0
FunctionEnd
!macroend
!insertmacro CLOSE_APP ""
!insertmacro CLOSE_APP "un."

Function .onInit
  SetShellVarContext current
FunctionEnd

Function un.onInit
  SetShellVarContext current
FunctionEnd

; --- install -------------------------------------------------------------------------------------

Section "${APP}" SecMain
  SectionIn RO
  Call WaitForServer
  Call CloseApp
  SetOutPath "$INSTDIR"
  ; An update replaces the runtime wholesale: a file left from an older version must not be loaded.
  RMDir /r "$INSTDIR\_internal"
  File /r "${PAYLOAD}/*"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  CreateShortcut "$SMPROGRAMS\${APP}.lnk" "$INSTDIR\searchdesk.exe" "" "$INSTDIR\searchdesk.exe" 0

  WriteRegStr HKCU "${UNINST_KEY}" "DisplayName" "${APP}"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINST_KEY}" "Publisher" "${APP}"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayIcon" "$INSTDIR\searchdesk.exe"
  WriteRegStr HKCU "${UNINST_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINST_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINST_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  IntFmt $0 "0x%08X" $0
  WriteRegDWORD HKCU "${UNINST_KEY}" "EstimatedSize" "$0"
SectionEnd

Section /o "Start ${APP} when you sign in to Windows" SecAutostart
  WriteRegStr HKCU "${RUN_KEY}" "${RUN_VALUE}" '"$INSTDIR\searchdesk.exe" "--autostart"'
SectionEnd

; --- uninstall -----------------------------------------------------------------------------------

Section "Uninstall"
  Call un.WaitForServer
  ; 1. The app signs out: it alone holds the refresh token, so only it can revoke it at Google.
  ${If} ${FileExists} "$INSTDIR\searchdesk.exe"
    DetailPrint "Signing out of Google and removing the saved sign-in..."
    ClearErrors
    ExecWait '"$INSTDIR\searchdesk.exe" --uninstall-cleanup' $0
    ${If} ${Errors}
    ${OrIf} $0 != 0
      DetailPrint "SearchDesk could not sign out; remove its access at https://myaccount.google.com/permissions"
    ${EndIf}
  ${EndIf}
  Call un.CloseApp

  ; 2. Remove the same things here too, in case the app could not (each is a no-op when already gone).
  DeleteRegValue HKCU "${RUN_KEY}" "${RUN_VALUE}"
  nsExec::Exec 'cmdkey.exe /delete:${CRED_TARGET}'
  Pop $0
  nsExec::Exec 'cmdkey.exe /delete:${CRED_TARGET_COMPOUND}'
  Pop $0
  Delete "$SMPROGRAMS\${APP}.lnk"
  DeleteRegKey HKCU "${AUMID_KEY}"

  ; 3. Only our own files: the install folder is fixed (no directory page), but stay specific anyway.
  RMDir /r "$INSTDIR\_internal"
  Delete "$INSTDIR\searchdesk.exe"
  Delete "$INSTDIR\searchdesk-server.exe"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey HKCU "${UNINST_KEY}"
SectionEnd
