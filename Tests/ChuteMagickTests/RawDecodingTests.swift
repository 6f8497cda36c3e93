import ChuteApp
import ChuteCatalog
import ChuteCore
import ChuteMagick
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Camera RAW inputs, decoded by LibRaw directly: DNG files made at test time (``DNGFixture``) and the corpus's
/// RAW files.
@Suite struct RawDecodingTests {
    /// The red and blue levels (0…1) of the output's pixel at `x`, `y`.
    private static func redAndBlue(_ path: FilePath, x: Int, y: Int) throws -> (red: Double, blue: Double) {
        let text = try MagickTool.identify("%[fx:p{\(x),\(y)}.r] %[fx:p{\(x),\(y)}.b]", path)
        let values = text.split(separator: " ").compactMap { Double($0) }
        guard values.count == 2 else { throw FixtureError("identify printed '\(text)'") }
        return (values[0], values[1])
    }

    @Test func generatedDNGIsDevelopedIntoAJPEG() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("photo.dng")
        let output = directory.file("photo.jpg")
        try DNGFixture.write(to: input, width: 64, height: 48, colour: DNGFixture.redOverBlue(height: 48))
        try #require(MediaType.sniff(try input.readBytes()) == .dng)

        let report = try Conversion.run(input, to: "jpg", output: output)

        #expect(try MagickTool.identify("%m %wx%h", output) == "JPEG 64x48")
        #expect(report.details["inputFormat"] == "DNG")
        #expect(report.details["inputWidth"] == "64" && report.details["inputHeight"] == "48")
        let top = try Self.redAndBlue(output, x: 32, y: 4)
        let bottom = try Self.redAndBlue(output, x: 32, y: 43)
        #expect(top.red > 0.5 && top.blue < 0.3, "top \(top)")
        #expect(bottom.blue > 0.5 && bottom.red < 0.3, "bottom \(bottom)")
    }

    /// Orientation 6 (turn 90° clockwise to view): the top of the sensor image ends up on the right.
    @Test func theCamerasOrientationTurnsThePixels() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("portrait.dng")
        let output = directory.file("portrait.jpg")
        try DNGFixture.write(
            to: input,
            width: 64,
            height: 48,
            orientation: 6,
            colour: DNGFixture.redOverBlue(height: 48)
        )

        _ = try Conversion.run(input, to: "jpg", output: output)

        #expect(try MagickTool.identify("%wx%h %[orientation]", output) == "48x64 Undefined")
        let right = try Self.redAndBlue(output, x: 43, y: 32)
        let left = try Self.redAndBlue(output, x: 4, y: 32)
        #expect(right.red > 0.5 && right.blue < 0.3, "right \(right)")
        #expect(left.blue > 0.5 && left.red < 0.3, "left \(left)")
    }

    @Test func sixteenBitTargetsKeepSixteenBits() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("photo.dng")
        let output = directory.file("photo.png")
        try DNGFixture.write(to: input, width: 32, height: 32, colour: DNGFixture.redOverBlue(height: 32))

        _ = try Conversion.run(input, to: "png", output: output)

        #expect(try MagickTool.identify("%m %wx%h %z", output) == "PNG 32x32 16")
    }

    @Test func aCutShortRawFileIsCorruptInput() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("cut.dng")
        let output = directory.file("cut.jpg")
        let whole = DNGFixture.make(width: 64, height: 48, colour: DNGFixture.redOverBlue(height: 48))
        try input.write(Array(whole.prefix(whole.count / 2)))

        let failure = try #require(Conversion.failure(input, to: "jpg", output: output))

        #expect(failure.code == .corruptInput, "\(failure)")
        #expect(failure.message.contains("cut short"), "\(failure)")
        #expect(!output.exists)
    }

    @Test func pixelLimitRefusesTheFileBeforeItIsUnpacked() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("photo.dng")
        let output = directory.file("photo.jpg")
        try DNGFixture.write(to: input, width: 64, height: 48, colour: DNGFixture.redOverBlue(height: 48))
        var limits = JobLimits()
        limits.pixels = 1000
        let request = ConversionRequest(
            jobID: "test",
            engine: .image,
            input: input,
            output: output,
            format: try #require(Engines.registry.format(named: "jpg")),
            options: ConversionOptions(),
            limits: limits
        )
        var fractions: [Double] = []

        #expect {
            _ = try ImageEngine().convert(request) { fractions.append($0.fraction) }
        } throws: { error in
            (error as? ConversionFailure)?.code == .limitExceeded
                && (error as? ConversionFailure)?.message.contains("maxPixels is 1000") == true
        }
        #expect(fractions.isEmpty, "progress \(fractions)")
        #expect(!output.exists)
    }

    /// LibRaw's ceiling for raw data follows the job's memory limit: a DNG whose headers declare a 7200x7000
    /// lossless-JPEG mosaic (within ImageMagick's limits) needs about 96 MiB for it, more than a 100 MB job allows.
    @Test func theMemoryLimitBoundsLibRawsAllocation() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("large.dng")
        let output = directory.file("large.jpg")
        var bytes = DNGFixture.make(width: 64, height: 48, colour: DNGFixture.redOverBlue(height: 48))
        // IFD0 starts at byte 8 with its entry count; each entry is 12 bytes, its value at +8. Entries 1, 2, 4 and 11
        // are ImageWidth, ImageLength (LONG), Compression (SHORT) and RowsPerStrip (LONG).
        func value(ofEntry index: Int) -> Int { 8 + 2 + 12 * index + 8 }
        for (index, tag, newValue) in [(1, 0x0100, 7200), (2, 0x0101, 7000), (4, 0x0103, 7), (11, 0x0116, 7000)] {
            let entry = value(ofEntry: index) - 8
            try #require(Int(bytes[entry]) | Int(bytes[entry + 1]) << 8 == tag)
            for byte in 0..<4 { bytes[value(ofEntry: index) + byte] = UInt8(newValue >> (8 * byte) & 0xFF) }
        }
        try input.write(bytes)
        var limits = JobLimits()
        limits.memory = 100_000_000
        let request = ConversionRequest(
            jobID: "test",
            engine: .image,
            input: input,
            output: output,
            format: try #require(Engines.registry.format(named: "jpg")),
            options: ConversionOptions(),
            limits: limits
        )

        #expect {
            _ = try ImageEngine().convert(request) { _ in }
        } throws: { error in
            guard let failure = error as? ConversionFailure else { return false }
            return failure.code == .limitExceeded && failure.message.contains("libraw_unpack")
        }
        #expect(!output.exists)
    }

    /// The corpus's lossy DNG converts; its metadata-only CR2 and CR3 (stripped of their raw data, keeping the
    /// embedded preview) are refused as holding no raw image, rather than converted from the preview.
    @Test(.enabled(if: Corpus.isPresent, "the shared corpus (../shared/corpus) is absent"))
    func corpusRawFiles() throws {
        let directory = try TemporaryDirectory()
        let dng = directory.file("dng.jpg")
        _ = try Conversion.run(Corpus.folder.appending("raw/dng_lg_g4_lossy.dng"), to: "jpg", output: dng)
        #expect(try MagickTool.identify("%m %wx%h", dng) == "JPEG 600x338")

        for (name, camera) in [
            ("cr2_canon_350d_stub.cr2", "350D"), ("cr3_canon_r6_pruned.cr3", "EOS R6"),
        ] {
            let output = directory.file("\(name).jpg")
            let failure = try #require(
                Conversion.failure(Corpus.folder.appending("raw/\(name)"), to: "jpg", output: output)
            )
            #expect(failure.code == .unsupportedInput, "\(name): \(failure)")
            #expect(failure.message.contains("no raw image"), "\(name): \(failure)")
            // No metadata value goes into a sidecar: the message does not name the camera.
            #expect(!failure.message.contains(camera), "\(name): \(failure)")
            #expect(!output.exists)
        }
        // The RW2 stub's strip claims 20 MB in a 12 KB file, which LibRaw would develop into noise without a word.
        let rw2 = directory.file("rw2.jpg")
        let rw2Failure = try #require(
            Conversion.failure(Corpus.folder.appending("raw/rw2_panasonic_lx3_stub.rw2"), to: "jpg", output: rw2)
        )
        #expect(rw2Failure.code == .corruptInput && rw2Failure.message.contains("cut short"), "\(rw2Failure)")
        #expect(!rw2.exists)
        // LibRaw itself finds the RAF stub's raw data missing: its message reaches the failure.
        let raf = directory.file("raf.jpg")
        let rafFailure = try #require(
            Conversion.failure(Corpus.folder.appending("raw/raf_fujifilm_s5pro_stub.raf"), to: "jpg", output: raf)
        )
        #expect(rafFailure.code == .corruptInput, "\(rafFailure)")
        #expect(rafFailure.message.contains("libraw_unpack failed: Input/output error"), "\(rafFailure)")
        #expect(!raf.exists)
    }
}

/// ``RawEXIF`` reads untrusted files: damaged IFDs give fewer tags or none, never a crash or a read outside the file.
@Suite struct RawEXIFTests {
    /// A generated DNG with EXIF and GPS written into it by `exiftool`.
    private static func photo(in directory: borrowing TemporaryDirectory) throws -> [UInt8] {
        let path = directory.file("photo.dng")
        try DNGFixture.write(to: path, width: 16, height: 16) { _, _ in (0.5, 0.5, 0.5) }
        try CommandLineTool.run([
            "exiftool", "-q", "-overwrite_original", "-n", "-DateTimeOriginal=2024:06:01 10:00:00", "-ISO=200",
            "-LensModel=Test Lens", "-GPSLatitude=48.8566", "-GPSLatitudeRef=N", path.string,
        ])
        return try path.readBytes()
    }

    @Test func theTagsToCarryAreCopiedVerbatim() throws {
        let directory = try TemporaryDirectory()
        let bytes = try Self.photo(in: directory)

        let exif = try #require(RawEXIF(reading: bytes))

        #expect(exif.profile.starts(with: Array("Exif".utf8) + [0, 0, 0x49, 0x49, 0x2A, 0x00]))
        let text = String(decoding: exif.profile, as: UTF8.self)
        for value in [DNGFixture.make, DNGFixture.model, "2024:06:01 10:00:00", "Test Lens"] {
            #expect(text.contains(value), "\(value)")
        }
        // Neither the mosaic nor the DNG colour tags come along: the profile is small.
        #expect(exif.profile.count < 600, "\(exif.profile.count) bytes")
    }

    @Test func damagedFilesGiveFewerTagsOrNoneWithoutACrash() throws {
        let directory = try TemporaryDirectory()
        let bytes = try Self.photo(in: directory)
        #expect(RawEXIF(reading: []) == nil)
        #expect(RawEXIF(reading: Array(bytes.prefix(7))) == nil)
        #expect(RawEXIF(reading: Array(repeating: 0xFF, count: 4096)) == nil)
        // Every byte of the header and the IFDs set to 0xFF in turn, and the file cut at every 97th byte.
        var parsed = 0
        for index in 0..<min(bytes.count, 2048) {
            var damaged = bytes
            damaged[index] = 0xFF
            if RawEXIF(reading: damaged) != nil { parsed += 1 }
        }
        for length in stride(from: 0, to: bytes.count, by: 97) {
            _ = RawEXIF(reading: Array(bytes.prefix(length)))
        }
        #expect(parsed > 0)
    }
}
