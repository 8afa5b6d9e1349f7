# SPDX-License-Identifier: GPL-2.0
# Sphinx configuration for "make htmldocs" (tools/htmldocs).  The uAPI and
# library references come from the headers' kernel-doc comments through the
# kernel's own kernel-doc extension and script, from Debian's
# linux-source-6.1 (unpacked by tools/kdoc; its directory is RMAWIN_KDOC).
import os
import sys

kdoc = os.environ.get('RMAWIN_KDOC')
if not kdoc:
    sys.exit('RMAWIN_KDOC is not set: build with "make htmldocs"')
sys.path.insert(0, os.path.join(kdoc, 'Documentation', 'sphinx'))

project = 'rmawin'
copyright = '2026, the rmawin developers'
author = 'the rmawin developers'
version = release = os.environ.get('RMAWIN_VERSION', '')

extensions = ['kerneldoc']
kerneldoc_bin = os.path.join(kdoc, 'scripts', 'kernel-doc')
kerneldoc_srctree = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))

master_doc = 'index'
exclude_patterns = []
primary_domain = 'c'
highlight_language = 'none'
html_theme = 'alabaster'
html_static_path = []
