#!/usr/bin/python3
"""Writes the small pictures of tests/data/images and what Debian's python3-pil decodes them to,
for tests/image_test.cpp: an independent decoder's values for nn::decodeImage to equal.

Each NAME.png or NAME.jpg gets NAME.expected: "height width channels", then the samples,
row-major [height, width, channels], 8-bit (16-bit PNG samples by their high byte), and
NAME.grey: PIL's convert("L") of the colour ones. Run by hand: tests/make_image_reference.py.
"""
import os

from PIL import Image

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "images")


def pattern(width, height, channels, seed):
    return bytes(((x * 37 + y * 91 + c * 53 + seed * 17) * 7) % 256
                 for y in range(height) for x in range(width) for c in range(channels))


def write_expected(name, image):
    mode_channels = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}
    channels = mode_channels[image.mode]
    data = image.tobytes()
    with open(os.path.join(FOLDER, name + ".expected"), "w") as f:
        f.write(f"{image.height} {image.width} {channels}\n")
        f.write(" ".join(str(b) for b in data) + "\n")
    if channels >= 3:
        grey = image.convert("RGB").convert("L")
        with open(os.path.join(FOLDER, name + ".grey"), "w") as f:
            f.write(" ".join(str(b) for b in grey.tobytes()) + "\n")


def main():
    os.makedirs(FOLDER, exist_ok=True)
    w, h = 7, 5
    pictures = {
        "grey": Image.frombytes("L", (w, h), pattern(w, h, 1, 1)),
        "grey_alpha": Image.frombytes("LA", (w, h), pattern(w, h, 2, 2)),
        "rgb": Image.frombytes("RGB", (w, h), pattern(w, h, 3, 3)),
        "rgba": Image.frombytes("RGBA", (w, h), pattern(w, h, 4, 4)),
    }
    for name, image in pictures.items():
        image.save(os.path.join(FOLDER, name + ".png"))
        write_expected(name, image)
    # A palette picture, one colour transparent: decoded to RGBA.
    palette = pictures["rgb"].quantize(6)
    palette.save(os.path.join(FOLDER, "palette.png"), transparency=0)
    write_expected("palette", Image.open(os.path.join(FOLDER, "palette.png")).convert("RGBA"))
    # 1-bit grey: 0 and 255.
    bits = pictures["grey"].point(lambda v: 255 if v > 127 else 0).convert("1")
    bits.save(os.path.join(FOLDER, "grey_1bit.png"))
    write_expected("grey_1bit", Image.open(os.path.join(FOLDER, "grey_1bit.png")).convert("L"))
    # 16-bit grey: samples v * 257 + 3, whose high byte is v.
    grey16 = Image.new("I;16", (w, h))
    grey16.putdata([v * 257 + 3 for v in pattern(w, h, 1, 5)])
    grey16.save(os.path.join(FOLDER, "grey_16bit.png"))
    reread = Image.open(os.path.join(FOLDER, "grey_16bit.png"))
    write_expected("grey_16bit", Image.frombytes("L", (w, h), bytes(v >> 8 for v in reread.getdata())))
    # JPEGs, decoded by PIL's libjpeg-turbo.
    for name, image in (("grey_jpeg", pictures["grey"]), ("rgb_jpeg", pictures["rgb"])):
        image.save(os.path.join(FOLDER, name + ".jpg"), quality=90)
        write_expected(name, Image.open(os.path.join(FOLDER, name + ".jpg")))


if __name__ == "__main__":
    main()
