/*
 * puffin-cli interop oracle: drives Apache Iceberg Java's own Puffin, deletion-vector and shaded
 * DataSketches classes so tests can compare puffin-cli with what Iceberg Java reads and writes.
 * Built and run by tests/interop/javaenv.py and oracle.py; see tests/interop/README.md.
 *
 *   read FILE              -> JSON: footer, properties, blobs (+ theta / dv details)
 *   write SPEC.json OUT    -> writes OUT with PuffinWriter (or BaseDVFileWriter); JSON summary
 *   theta-build IN OUT     -> builds a sketch exactly as Iceberg's ThetaSketchAgg; JSON summary
 *   batch                  -> JSON lines on stdin: {"cmd": "read"|"write"|"theta-build"|
 *                             "serialize", ...}
 *                             one JSON line per command on stdout: {"ok": true, "result": ...}
 *                             or {"ok": false, "error": "..."}
 */

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.File;
import java.io.FileInputStream;
import java.io.BufferedInputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Files;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.deletes.BaseDVFileWriter;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.puffin.Blob;
import org.apache.iceberg.puffin.BlobMetadata;
import org.apache.iceberg.puffin.FileMetadata;
import org.apache.iceberg.puffin.Puffin;
import org.apache.iceberg.puffin.PuffinCompressionCodec;
import org.apache.iceberg.puffin.PuffinReader;
import org.apache.iceberg.puffin.PuffinWriter;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.iceberg.shaded.org.apache.datasketches.common.Family;
import org.apache.iceberg.shaded.org.apache.datasketches.memory.Memory;
import org.apache.iceberg.shaded.org.apache.datasketches.theta.CompactSketch;
import org.apache.iceberg.shaded.org.apache.datasketches.theta.HashIterator;
import org.apache.iceberg.shaded.org.apache.datasketches.theta.SetOperationBuilder;
import org.apache.iceberg.shaded.org.apache.datasketches.theta.Sketch;
import org.apache.iceberg.shaded.org.apache.datasketches.theta.UpdateSketch;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.Pair;

public final class PuffinOracle {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String THETA = "apache-datasketches-theta-v1";
  private static final String DV = "deletion-vector-v1";
  private static final int ROW_POSITION_FIELD_ID = 2147483645;
  private static final int FIRST_POSITIONS = 20;

  private PuffinOracle() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    if (args.length == 0) {
      usage();
    }
    switch (args[0]) {
      case "read":
        need(args, 2);
        out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(read(args[1])));
        break;
      case "write":
        need(args, 3);
        out.println(JSON.writeValueAsString(write(JSON.readTree(new File(args[1])), args[2])));
        break;
      case "theta-build":
        need(args, 3);
        out.println(JSON.writeValueAsString(thetaBuild(args[1], args[2])));
        break;
      case "batch":
        batch(out);
        break;
      default:
        usage();
    }
  }

  private static void need(String[] args, int count) {
    if (args.length != count) {
      usage();
    }
  }

  private static void usage() {
    System.err.println(
        "usage: PuffinOracle read FILE | write SPEC.json OUT | theta-build IN OUT | batch");
    System.exit(2);
  }

  private static void batch(PrintStream out) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      ObjectNode response = JSON.createObjectNode();
      try {
        JsonNode request = JSON.readTree(line);
        String cmd = request.path("cmd").asText();
        JsonNode result;
        switch (cmd) {
          case "read":
            result = read(request.get("path").asText());
            break;
          case "write":
            JsonNode spec =
                request.has("spec")
                    ? request.get("spec")
                    : JSON.readTree(new File(request.get("spec_path").asText()));
            result = write(spec, request.get("out").asText());
            break;
          case "theta-build":
            result = thetaBuild(request.get("input").asText(), request.get("output").asText());
            break;
          case "serialize":
            result = serialize(request.get("type").asText(), request.get("values"));
            break;
          default:
            throw new IllegalArgumentException("unknown cmd: " + cmd);
        }
        response.put("ok", true);
        response.set("result", result);
      } catch (Exception | StackOverflowError e) {
        response.put("ok", false);
        response.put("error", describe(e));
      }
      out.println(JSON.writeValueAsString(response));
    }
  }

  private static String describe(Throwable e) {
    StringBuilder text = new StringBuilder(e.toString());
    for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
      text.append(" | caused by: ").append(cause);
    }
    return text.toString();
  }

  // ---------------------------------------------------------------------------------- read

  static ObjectNode read(String path) throws Exception {
    byte[] file = java.nio.file.Files.readAllBytes(Path.of(path));
    ObjectNode out = JSON.createObjectNode();
    out.put("file", path);
    out.put("file_size", file.length);
    out.put("sha256", sha256(file));
    ArrayNode errors = JSON.createArrayNode();
    out.set("footer", footerFacts(file));
    ObjectNode properties = JSON.createObjectNode();
    ArrayNode blobs = JSON.createArrayNode();
    try (PuffinReader reader =
        Puffin.read(Files.localInput(new File(path))).withFileSize(file.length).build()) {
      FileMetadata metadata = reader.fileMetadata();
      metadata.properties().forEach(properties::put);
      List<BlobMetadata> all = metadata.blobs();
      for (int index = 0; index < all.size(); index++) {
        BlobMetadata blob = all.get(index);
        ObjectNode node = blobMetadata(index, blob);
        blobs.add(node);
        byte[] data;
        try {
          data = readBlob(reader, blob);
        } catch (Exception e) {
          node.put("java_error", describe(e));
          errors.add("blob " + index + ": " + describe(e));
          continue;
        }
        node.put("decompressed_length", data.length);
        node.put("decompressed_sha256", sha256(data));
        if (THETA.equals(blob.type())) {
          try {
            node.set("theta", theta(data, blob.properties().get("ndv")));
          } catch (Exception e) {
            node.put("theta_error", describe(e));
            errors.add("blob " + index + " theta: " + describe(e));
          }
        } else if (DV.equals(blob.type())) {
          try {
            node.set("dv", deletionVector(path, file, blob));
          } catch (Exception e) {
            node.put("dv_error", describe(e));
            errors.add("blob " + index + " dv: " + describe(e));
          }
        }
      }
    } catch (Exception e) {
      errors.add(describe(e));
    }
    out.put("java_accepted", errors.isEmpty());
    out.set("java_errors", errors);
    out.set("properties", properties);
    out.set("blobs", blobs);
    return out;
  }

  private static ObjectNode footerFacts(byte[] file) {
    ObjectNode footer = JSON.createObjectNode();
    if (file.length < 12) {
      return footer;
    }
    ByteBuffer tail = ByteBuffer.wrap(file, file.length - 12, 12).order(ByteOrder.LITTLE_ENDIAN);
    int payloadSize = tail.getInt();
    footer.put("payload_size", payloadSize);
    footer.put("footer_size", (long) payloadSize + 16);
    footer.put("footer_start", file.length - ((long) payloadSize + 16));
    ArrayNode flags = footer.putArray("flags_bytes");
    for (int i = 0; i < 4; i++) {
      flags.add(file[file.length - 8 + i] & 0xFF);
    }
    footer.put("footer_payload_compressed", (file[file.length - 8] & 1) != 0);
    return footer;
  }

  private static ObjectNode blobMetadata(int index, BlobMetadata blob) {
    ObjectNode node = JSON.createObjectNode();
    node.put("index", index);
    node.put("type", blob.type());
    ArrayNode fields = node.putArray("fields");
    blob.inputFields().forEach(fields::add);
    node.put("snapshot-id", blob.snapshotId());
    node.put("sequence-number", blob.sequenceNumber());
    node.put("offset", blob.offset());
    node.put("length", blob.length());
    node.put("compression-codec", blob.compressionCodec());
    ObjectNode properties = node.putObject("properties");
    blob.properties().forEach(properties::put);
    return node;
  }

  private static byte[] readBlob(PuffinReader reader, BlobMetadata blob) throws Exception {
    Iterator<Pair<BlobMetadata, ByteBuffer>> it = reader.readAll(List.of(blob)).iterator();
    return bytes(it.next().second());
  }

  private static ObjectNode theta(byte[] data, String ndvProperty) throws Exception {
    ObjectNode t = JSON.createObjectNode();
    if (data.length >= 8) {
      t.put("preamble_longs", data[0] & 0x3F);
      t.put("serial_version", data[1] & 0xFF);
      t.put("family_id", data[2] & 0xFF);
      t.put("flags", data[5] & 0xFF);
      t.put("seed_hash", (data[6] & 0xFF) | ((data[7] & 0xFF) << 8));
    }
    Memory memory = Memory.wrap(data);
    CompactSketch heap = CompactSketch.heapify(memory);
    t.put("heapify_retained_entries", heap.getRetainedEntries(true));
    t.put("heapify_estimate", heap.getEstimate());
    CompactSketch sketch = CompactSketch.wrap(memory);
    double estimate = sketch.getEstimate();
    t.put("sketch_class", sketch.getClass().getSimpleName());
    t.put("estimate", estimate);
    t.put("estimate_long", (long) estimate);
    t.put("is_empty", sketch.isEmpty());
    t.put("is_estimation_mode", sketch.isEstimationMode());
    t.put("is_ordered", sketch.isOrdered());
    t.put("retained_entries", sketch.getRetainedEntries(true));
    t.put("theta", sketch.getTheta());
    t.put("theta_long", sketch.getThetaLong());
    t.put("lower_bound_2sd", sketch.getLowerBound(2));
    t.put("upper_bound_2sd", sketch.getUpperBound(2));
    t.put("hashes_sha256", hashesSha256(sketch));
    t.put("ndv_property", ndvProperty);
    t.put(
        "ndv_property_equals_long_estimate",
        ndvProperty != null && ndvProperty.equals(String.valueOf((long) estimate)));
    return t;
  }

  /** SHA-256 of the retained hashes in ascending order, each as decimal text + "\n". */
  private static String hashesSha256(Sketch sketch) throws Exception {
    long[] hashes = new long[sketch.getRetainedEntries(true)];
    HashIterator it = sketch.iterator();
    int count = 0;
    while (it.next()) {
      hashes[count++] = it.get();
    }
    Arrays.sort(hashes, 0, count);
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    for (int i = 0; i < count; i++) {
      digest.update((hashes[i] + "\n").getBytes(StandardCharsets.US_ASCII));
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  private static ObjectNode deletionVector(String path, byte[] file, BlobMetadata blob)
      throws Exception {
    Map<String, String> props = blob.properties();
    String referenced = props.get("referenced-data-file");
    String cardinalityProperty = props.get("cardinality");
    ObjectNode node = JSON.createObjectNode();
    node.put("referenced_data_file", referenced);
    node.put("cardinality_property", cardinalityProperty);
    byte[] raw = Arrays.copyOfRange(file, (int) blob.offset(), (int) (blob.offset() + blob.length()));
    if (raw.length >= 8) {
      node.put("length_prefix_be", ByteBuffer.wrap(raw, 0, 4).getInt() & 0xFFFFFFFFL);
      node.put("magic_hex", HexFormat.of().formatHex(raw, 4, 8));
    }
    if (raw.length >= 4) {
      node.put("crc32_be", ByteBuffer.wrap(raw, raw.length - 4, 4).getInt() & 0xFFFFFFFFL);
    }
    if (raw.length >= 16) {
      node.put(
          "bitmap_count", ByteBuffer.wrap(raw, 8, 8).order(ByteOrder.LITTLE_ENDIAN).getLong());
    }
    if (cardinalityProperty == null) {
      throw new IllegalArgumentException("blob has no 'cardinality' property");
    }
    DeleteFile deleteFile =
        org.apache.iceberg.FileMetadata.deleteFileBuilder(PartitionSpec.unpartitioned())
            .ofPositionDeletes()
            .withFormat(FileFormat.PUFFIN)
            .withPath(path)
            .withFileSizeInBytes(file.length)
            .withRecordCount(Long.parseLong(cardinalityProperty))
            .withReferencedDataFile(referenced)
            .withContentOffset(blob.offset())
            .withContentSizeInBytes(blob.length())
            .build();
    PositionDeleteIndex index = PositionDeleteIndex.deserialize(raw, deleteFile);
    node.put("cardinality", index.cardinality());
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    long[] count = {0};
    long[] last = {-1};
    ArrayNode first = JSON.createArrayNode();
    index.forEach(
        position -> {
          if (count[0] < FIRST_POSITIONS) {
            first.add(position);
          }
          count[0]++;
          last[0] = position;
          digest.update((position + "\n").getBytes(StandardCharsets.US_ASCII));
        });
    node.put("positions_count", count[0]);
    node.set("first_positions", first);
    if (count[0] > 0) {
      node.put("last_position", last[0]);
    } else {
      node.putNull("last_position");
    }
    node.put("positions_sha256", HexFormat.of().formatHex(digest.digest()));
    return node;
  }

  // --------------------------------------------------------------------------------- write

  static ObjectNode write(JsonNode spec, String outPath) throws Exception {
    File out = new File(outPath);
    java.nio.file.Files.deleteIfExists(out.toPath());
    if (spec.path("dv-file-writer").asBoolean(false)) {
      return writeWithDVFileWriter(spec, out);
    }
    Puffin.WriteBuilder builder = Puffin.write(Files.localOutput(out));
    spec.path("properties").fields().forEachRemaining(e -> builder.set(e.getKey(), e.getValue().asText()));
    if (spec.hasNonNull("default-codec")) {
      builder.compressBlobs(codec(spec.get("default-codec").asText()));
    }
    if (spec.path("compress-footer").asBoolean(false)) {
      builder.compressFooter();
    }
    ObjectNode result = JSON.createObjectNode();
    try (PuffinWriter writer = builder.build()) {
      for (JsonNode blobSpec : spec.path("blobs")) {
        writer.write(blob(blobSpec));
      }
      writer.finish();
      result.put("file_size", writer.fileSize());
      result.put("footer_size", writer.footerSize());
      ArrayNode blobs = result.putArray("blobs");
      List<BlobMetadata> written = writer.writtenBlobsMetadata();
      for (int i = 0; i < written.size(); i++) {
        blobs.add(blobMetadata(i, written.get(i)));
      }
    }
    return result;
  }

  private static Blob blob(JsonNode spec) throws Exception {
    boolean isDv = spec.has("dv");
    String type = spec.path("type").asText(isDv ? DV : null);
    if (type == null) {
      throw new IllegalArgumentException("blob spec needs 'type': " + spec);
    }
    List<Integer> fields = new ArrayList<>();
    if (spec.has("fields")) {
      spec.get("fields").forEach(f -> fields.add(f.asInt()));
    } else if (isDv) {
      fields.add(ROW_POSITION_FIELD_ID);
    }
    long snapshotId = spec.path("snapshot-id").asLong(-1);
    long sequenceNumber = spec.path("sequence-number").asLong(-1);
    Map<String, String> properties = new LinkedHashMap<>();
    ByteBuffer payload;
    if (isDv) {
      JsonNode dv = spec.get("dv");
      PositionDeleteIndex index = positionIndex(dv);
      payload = index.serialize();
      if (dv.hasNonNull("referenced-data-file")) {
        properties.put("referenced-data-file", dv.get("referenced-data-file").asText());
      }
      properties.put("cardinality", String.valueOf(index.cardinality()));
    } else if (spec.has("payload-b64")) {
      payload = ByteBuffer.wrap(Base64.getDecoder().decode(spec.get("payload-b64").asText()));
    } else if (spec.has("payload-file")) {
      payload =
          ByteBuffer.wrap(java.nio.file.Files.readAllBytes(Path.of(spec.get("payload-file").asText())));
    } else {
      throw new IllegalArgumentException(
          "blob spec needs one of 'payload-b64', 'payload-file', 'dv': " + spec);
    }
    spec.path("properties").fields().forEachRemaining(e -> properties.put(e.getKey(), e.getValue().asText()));
    PuffinCompressionCodec codec =
        spec.hasNonNull("codec") ? codec(spec.get("codec").asText()) : null;
    return new Blob(type, fields, snapshotId, sequenceNumber, payload, codec, properties);
  }

  private static PuffinCompressionCodec codec(String name) {
    switch (name) {
      case "none":
        return PuffinCompressionCodec.NONE;
      case "zstd":
        return PuffinCompressionCodec.ZSTD;
      case "lz4":
        return PuffinCompressionCodec.LZ4;
      default:
        throw new IllegalArgumentException("unknown codec: " + name);
    }
  }

  /** A BitmapPositionDeleteIndex (package-private in Iceberg) filled from a DV spec. */
  private static PositionDeleteIndex positionIndex(JsonNode dv) throws Exception {
    Class<?> cls = Class.forName("org.apache.iceberg.deletes.BitmapPositionDeleteIndex");
    Constructor<?> constructor = cls.getDeclaredConstructor();
    constructor.setAccessible(true);
    PositionDeleteIndex index = (PositionDeleteIndex) constructor.newInstance();
    for (JsonNode position : dv.path("positions")) {
      index.delete(position.asLong());
    }
    for (JsonNode range : dv.path("ranges")) {
      // [start, end): end exclusive, as PositionDeleteIndex.delete(posStart, posEnd)
      index.delete(range.get(0).asLong(), range.get(1).asLong());
    }
    if (dv.hasNonNull("positions-file")) {
      try (BufferedReader lines =
          java.nio.file.Files.newBufferedReader(Path.of(dv.get("positions-file").asText()))) {
        String line;
        while ((line = lines.readLine()) != null) {
          if (!line.isBlank()) {
            index.delete(Long.parseLong(line.trim()));
          }
        }
      }
    }
    return index;
  }

  private static ObjectNode writeWithDVFileWriter(JsonNode spec, File out) throws Exception {
    BaseDVFileWriter writer = new BaseDVFileWriter(() -> Files.localOutput(out), path -> null);
    try (writer) {
      for (JsonNode dv : spec.path("dvs")) {
        writer.delete(
            dv.get("referenced-data-file").asText(),
            positionIndex(dv),
            PartitionSpec.unpartitioned(),
            null);
      }
    }
    ObjectNode result = JSON.createObjectNode();
    result.put("file_size", out.length());
    ArrayNode files = result.putArray("delete_files");
    for (DeleteFile file : writer.result().deleteFiles()) {
      ObjectNode node = files.addObject();
      node.put("path", file.location());
      node.put("referenced_data_file", file.referencedDataFile());
      node.put("content_offset", file.contentOffset());
      node.put("content_size_in_bytes", file.contentSizeInBytes());
      node.put("record_count", file.recordCount());
      node.put("file_size_in_bytes", file.fileSizeInBytes());
    }
    return result;
  }

  // --------------------------------------------------------------------------- theta-build

  /**
   * Input: records of a 4-byte big-endian signed length N then N value bytes (Iceberg's
   * single-value serialization); N = -1 starts a new Spark partition. Each partition gets its
   * own ThetaSketchAgg buffer; partials are merged exactly as Spark's final aggregation does.
   */
  static ObjectNode thetaBuild(String inputPath, String outputPath) throws Exception {
    List<UpdateSketch> partitions = new ArrayList<>();
    UpdateSketch current = newAggregationBuffer();
    partitions.add(current);
    long values = 0;
    try (DataInputStream in =
        new DataInputStream(new BufferedInputStream(new FileInputStream(inputPath), 1 << 16))) {
      while (true) {
        int length;
        try {
          length = in.readInt();
        } catch (EOFException end) {
          break;
        }
        if (length == -1) {
          current = newAggregationBuffer();
          partitions.add(current);
          continue;
        }
        if (length < 0) {
          throw new IllegalArgumentException("bad record length " + length + " in " + inputPath);
        }
        byte[] value = new byte[length];
        in.readFully(value);
        current.update(ByteBuffer.wrap(value)); // ThetaSketchAgg.update
        values++;
      }
    }
    Sketch merged = newAggregationBuffer(); // final aggregation's createAggregationBuffer
    for (UpdateSketch partition : partitions) {
      // partial serialize (toBytes) then deserialize, then ThetaSketchAgg.merge
      Sketch partial = CompactSketch.wrap(Memory.wrap(partition.compact().toByteArray()));
      merged = new SetOperationBuilder().buildUnion().union(merged, partial);
    }
    byte[] bytes = merged.compact().toByteArray(); // ThetaSketchAgg.eval -> toBytes
    java.nio.file.Files.write(Path.of(outputPath), bytes);
    ObjectNode result = JSON.createObjectNode();
    result.put("values", values);
    result.put("partitions", partitions.size());
    result.put("length", bytes.length);
    result.put("sha256", sha256(bytes));
    result.set("theta", theta(bytes, null));
    return result;
  }

  /** ThetaSketchAgg.createAggregationBuffer: Alpha family, default nominal entries and seed. */
  private static UpdateSketch newAggregationBuffer() {
    return UpdateSketch.builder().setFamily(Family.ALPHA).build();
  }

  // ----------------------------------------------------------------------------- serialize

  /**
   * Each text value (null stays null) parsed as Java/Iceberg parse it and serialized by
   * Iceberg's Conversions.toByteBuffer (the single-value serialization sketches are fed);
   * base64 in the reply. Numbers: Java's parsers; fixed/binary: hex; decimal: BigDecimal set to
   * the type's scale (exact); date, time, timestamps, uuid: Iceberg's string Literal conversion.
   */
  static ArrayNode serialize(String typeText, JsonNode values) {
    Type.PrimitiveType type = Types.fromPrimitiveString(typeText);
    ArrayNode out = JSON.createArrayNode();
    for (JsonNode value : values) {
      if (value.isNull()) {
        out.addNull();
      } else {
        out.add(bytes(Conversions.toByteBuffer(type, javaValue(type, value.asText()))));
      }
    }
    return out;
  }

  private static Object javaValue(Type.PrimitiveType type, String text) {
    switch (type.typeId()) {
      case BOOLEAN:
        return Boolean.parseBoolean(text);
      case INTEGER:
        return Integer.parseInt(text);
      case LONG:
        return Long.parseLong(text);
      case FLOAT:
        return Float.parseFloat(text);
      case DOUBLE:
        return Double.parseDouble(text);
      case STRING:
        return text;
      case FIXED:
      case BINARY:
        return ByteBuffer.wrap(HexFormat.of().parseHex(text));
      case DECIMAL:
        return new BigDecimal(text).setScale(((Types.DecimalType) type).scale());
      default:
        Literal<Object> literal = Literal.of(text).to(type);
        if (literal == null) {
          throw new IllegalArgumentException("cannot convert '" + text + "' to " + type);
        }
        return literal.value();
    }
  }

  // --------------------------------------------------------------------------------- utils

  private static byte[] bytes(ByteBuffer buffer) {
    ByteBuffer copy = buffer.duplicate();
    byte[] out = new byte[copy.remaining()];
    copy.get(out);
    return out;
  }

  private static String sha256(byte[] data) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
  }
}
