"""Small PDFs written out for the tests, object by object: pages of text in the standard Helvetica font, pages
holding only an image (a scanned document), an encrypted file, and files crafted to be expensive to read."""

from __future__ import annotations

import io
import zlib

_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _escaped(text: str) -> bytes:
    return text.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def text_page(*lines: str) -> bytes:
    """A page's content stream showing `lines`, one under the other."""
    shown = b" T* ".join(b"(" + _escaped(line) + b") Tj" for line in lines)
    return b"BT /F1 12 Tf 14 TL 72 720 Td " + shown + b" ET"


def pdf(*contents: bytes, image: bool = False, encrypt: bool = False, compress: bool = False) -> bytes:
    """A PDF of one page per content stream (`text_page`'s), every page able to use the font `/F1` and, with
    `image`, a 1×1 image `/Im1`; `encrypt` protects it with a password no test knows."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    font = _add(objects, _FONT)
    resources = b"<< /Font << /F1 %d 0 R >>" % font
    if image:
        pixel = _add(objects, b"<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray "
                              b"/BitsPerComponent 8 /Length 1 >>\nstream\n\x80\nendstream")
        resources += b" /XObject << /Im1 %d 0 R >>" % pixel
    resources += b" >>"
    kids = []
    for content in contents:
        body = zlib.compress(content) if compress else content
        stream = _add(objects, b"<< /Length %d%s >>\nstream\n" % (len(body), b" /Filter /FlateDecode" if compress
                                                                   else b"") + body + b"\nendstream")
        kids.append(_add(objects, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                                  b"/Resources %s >>" % (stream, resources)))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    trailer = b"/Size %d /Root 1 0 R" % (len(objects) + 1)
    if encrypt:
        key = _add(objects, b"<< /Filter /Standard /V 1 /R 2 /O <%s> /U <%s> /P -4 >>" % (b"ab" * 32, b"cd" * 32))
        trailer = b"/Size %d /Root 1 0 R /Encrypt %d 0 R /ID [<00112233445566778899aabbccddeeff> "  \
                  b"<00112233445566778899aabbccddeeff>]" % (len(objects) + 1, key)
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.writelines(b"%010d 00000 n \n" % offset for offset in offsets)
    out.write(b"trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n" % (trailer, xref))
    return out.getvalue()


def _add(objects: list[bytes], body: bytes) -> int:
    objects.append(body)
    return len(objects)


def scanned_page() -> bytes:
    """A page that only draws an image: no text layer."""
    return b"q 500 0 0 700 50 50 cm /Im1 Do Q"


def expanding_page(megabytes: int) -> bytes:
    """A page whose content stream is `megabytes` MB of drawing operators: it compresses to about a thousandth."""
    return b"0 0 m " * (megabytes * 1024 * 1024 // 6)
